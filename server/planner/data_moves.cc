#include "server/planner/data_moves.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/planner/move_model.h"

namespace fedberry::server::planner {
namespace {

// Counts up to 2^53 are exact in a double (GLPK's and the cost model's type).
constexpr uint64_t kMaxTotalSamples = uint64_t{1} << 53;

absl::Status CheckTime(const MoveClient& c, const char* what, double v) {
  if (std::isfinite(v) && v >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "client ", c.id, ": ", what, " is ", v, "; need a finite value >= 0"));
}

}  // namespace

double MoveFinishSeconds(const MoveRequest& r,
                         const std::vector<uint64_t>& samples, size_t i) {
  if (i >= r.clients.size() || i >= samples.size()) return 0;
  return ClientSeconds(r, samples, i, SenderWait(r, samples));
}

double MoveMakespan(const MoveRequest& r,
                    const std::vector<uint64_t>& samples) {
  const double wait = SenderWait(r, samples);
  double m = 0;
  for (size_t i = 0; i < r.clients.size() && i < samples.size(); ++i) {
    m = std::max(m, ClientSeconds(r, samples, i, wait));
  }
  return m;
}

absl::Status ValidateMoveRequest(const MoveRequest& r) {
  if (r.epochs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("epochs is ", r.epochs, "; need at least 1"));
  }
  if (r.unit == 0) {
    return absl::InvalidArgumentError(
        "unit is 0; moves need a unit of at least 1 sample");
  }
  if (r.bytes_per_sample == 0) {
    return absl::InvalidArgumentError(
        "bytes_per_sample is 0; need the size of one sample on the wire");
  }
  uint64_t total = 0;
  for (const MoveClient& c : r.clients) {
    for (absl::Status s :
         {CheckTime(c, "seconds_per_sample", c.seconds_per_sample),
          CheckTime(c, "fixed_seconds", c.fixed_seconds),
          CheckTime(c, "upload_seconds_per_byte", c.upload_seconds_per_byte),
          CheckTime(c, "download_seconds_per_byte",
                    c.download_seconds_per_byte)}) {
      if (!s.ok()) return s;
    }
    if (c.samples > kMaxTotalSamples - total) {
      return absl::InvalidArgumentError(
          absl::StrCat("clients hold more than 2^53 samples in all (client ",
                       c.id, " holds ", c.samples, ")"));
    }
    total += c.samples;
  }
  return absl::OkStatus();
}

absl::Status ValidateMovePlan(const MoveRequest& r,
                              const std::vector<uint64_t>& samples) {
  if (absl::Status s = ValidateMoveRequest(r); !s.ok()) return s;
  if (samples.size() != r.clients.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan has ", samples.size(), " entries for ",
                     r.clients.size(), " clients"));
  }
  uint64_t held = 0, planned = 0;
  for (const MoveClient& c : r.clients) held += c.samples;
  for (size_t i = 0; i < samples.size(); ++i) {
    const MoveClient& c = r.clients[i];
    if (!c.allows_moves && samples[i] != c.samples) {
      return absl::InvalidArgumentError(
          absl::StrCat("client ", c.id, " does not allow moves but is planned ",
                       samples[i], " samples instead of its ", c.samples));
    }
    const uint64_t change =
        std::max(samples[i], c.samples) - std::min(samples[i], c.samples);
    if (change % r.unit != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("client ", c.id, " changes by ", change,
                       " samples, not a multiple of the unit of ", r.unit));
    }
    if (samples[i] < KeepAtLeast(r, i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "client ", c.id, " is planned ", samples[i], " of its ", c.samples,
          " samples; a sender keeps at least one unit (", r.unit,
          ") to train"));
    }
    // Checked entry by entry so that the sum cannot overflow.
    if (samples[i] > held - planned) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan gives out more than the ", held,
                       " samples the clients hold (client ", c.id,
                       " is planned ", samples[i], ")"));
    }
    planned += samples[i];
  }
  if (planned != held) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan sums to ", planned, " samples, not the ", held, " held"));
  }
  return absl::OkStatus();
}

std::vector<DataMove> PairMoves(const MoveRequest& r,
                                const std::vector<uint64_t>& samples) {
  const size_t n = std::min(r.clients.size(), samples.size());
  std::vector<DataMove> moves;
  size_t s = 0, d = 0;  // one past the current sender / receiver
  uint64_t give = 0, take = 0;
  for (;;) {
    while (give == 0 && s < n) give = SamplesOut(r, samples, s++);
    while (take == 0 && d < n) take = SamplesIn(r, samples, d++);
    if (give == 0 || take == 0) break;
    const uint64_t piece = std::min(give, take);
    moves.push_back({s - 1, d - 1, piece});
    give -= piece;
    take -= piece;
  }
  return moves;
}

MovePlan NoMoves(const MoveRequest& r) {
  return MakeMovePlan(r, HeldCounts(r), "none");
}

}  // namespace fedberry::server::planner
