#include "server/planner/round_planner.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fedberry::server::planner {

absl::StatusOr<std::unique_ptr<RoundPlanner>> RoundPlanner::Create(
    const RoundPlanOptions& options) {
  if (!(options.min_factor >= 0) || !(options.max_factor >= 1) ||
      options.min_factor > 1 || options.max_epochs < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "planner bounds need 0 <= min_factor <= 1 <= max_factor and "
        "max_epochs >= 0 (got ",
        options.min_factor, ", ", options.max_factor, ", ", options.max_epochs,
        ")"));
  }
  if (options.data_moves && options.planner == "uniform") {
    return absl::InvalidArgumentError(
        "data moves need a planner that plans them: greedy or ilp, not "
        "uniform");
  }
  PlannerOptions po;
  po.ilp_time_limit_seconds = options.ilp_time_limit_seconds;
  auto planner = MakePlanner(options.planner, po);
  if (!planner.ok()) return planner.status();
  return std::unique_ptr<RoundPlanner>(
      new RoundPlanner(options, *std::move(planner)));
}

std::optional<RoundPlanner::MedianCapacity> RoundPlanner::MedianOf(
    const std::vector<std::string>& ids) const {
  std::deque<double> sps, transfer, up, down;
  for (const std::string& id : ids) {
    if (auto e = estimator_.Get(id)) {
      sps.push_back(e->seconds_per_sample);
      transfer.push_back(e->transfer_seconds());
      up.push_back(e->upload_seconds_per_byte);
      down.push_back(e->download_seconds_per_byte);
    }
  }
  if (sps.empty()) return std::nullopt;
  return MedianCapacity{Median(sps), Median(transfer), Median(up),
                        Median(down)};
}

bool RoundPlanner::BuildRequest(const std::vector<PlannedClient>& clients,
                                const v1::TrainConfig& config,
                                PlanRequest* request, std::string* note) const {
  const int64_t batch = std::max<int64_t>(1, config.batch_size());
  auto epoch_steps = [batch](uint64_t samples) {
    return static_cast<int64_t>((samples + batch - 1) / batch);
  };
  std::vector<std::string> ids;
  for (const PlannedClient& c : clients) ids.push_back(c.id);
  const std::optional<MedianCapacity> median = MedianOf(ids);
  if (!median) return false;

  int with_data = 0;
  int64_t total = 0;
  for (const PlannedClient& c : clients) {
    if (c.num_samples == 0) continue;
    ++with_data;
    total += config.local_steps() > 0
                 ? static_cast<int64_t>(config.local_steps())
                 : std::max<int64_t>(1, config.local_epochs()) *
                       epoch_steps(c.num_samples);
  }
  request->clients.clear();
  request->total_steps = total;
  const double share =
      with_data > 0 ? static_cast<double>(total) / with_data : 0.0;
  int64_t lo_sum = 0, hi_sum = 0;
  for (const PlannedClient& c : clients) {
    ClientCapacity cap;
    cap.id = c.id;
    auto e = estimator_.Get(c.id);
    cap.step_seconds =
        (e ? e->seconds_per_sample : median->seconds_per_sample) *
        static_cast<double>(batch);
    cap.fixed_seconds = e ? e->transfer_seconds() : median->transfer_seconds;
    if (c.num_samples > 0) {
      cap.min_steps = std::max<int64_t>(
          1, static_cast<int64_t>(std::floor(options_.min_factor * share)));
      cap.max_steps = std::max<int64_t>(
          cap.min_steps,
          static_cast<int64_t>(std::ceil(options_.max_factor * share)));
      if (options_.max_epochs > 0) {
        cap.max_steps = std::max<int64_t>(
            cap.min_steps,
            std::min(cap.max_steps,
                     options_.max_epochs * epoch_steps(c.num_samples)));
      }
    }
    lo_sum += cap.min_steps;
    hi_sum += cap.max_steps;
    request->clients.push_back(cap);
  }
  const int64_t kept = std::clamp(total, lo_sum, hi_sum);
  if (kept != total) {
    *note =
        absl::StrCat("the bounds allow ", lo_sum, "..", hi_sum,
                     " steps, so the round does ", kept, " instead of ", total);
    request->total_steps = kept;
  }
  return true;
}

absl::StatusOr<RoundPlan> RoundPlanner::PlanRound(
    const std::vector<PlannedClient>& clients,
    const v1::TrainConfig& config) const {
  RoundPlan out;
  if (options_.planner == "uniform") {
    out.summary = "planner uniform: every client trains the job's config";
    return out;
  }
  std::string note;
  if (!BuildRequest(clients, config, &out.request, &note)) {
    out.summary = absl::StrCat("planner ", options_.planner,
                               ": no client measured yet, uniform this round");
    return out;
  }
  auto plan = planner_->MakePlan(out.request);
  if (!plan.ok()) return plan.status();
  out.plan = *std::move(plan);
  if (!note.empty()) {
    out.plan.note =
        out.plan.note.empty() ? note : absl::StrCat(out.plan.note, "; ", note);
  }
  std::string parts;
  for (size_t i = 0; i < out.request.clients.size(); ++i) {
    const ClientCapacity& c = out.request.clients[i];
    out.steps[c.id] = out.plan.steps[i];
    absl::StrAppendFormat(&parts, "%s%s=%d (%.3f s/step)", i ? ", " : "", c.id,
                          out.plan.steps[i], c.step_seconds);
  }
  out.summary = absl::StrFormat(
      "planner %s: %d steps over %d clients, predicted makespan %.2f s: %s%s",
      out.plan.planner, out.request.total_steps, out.request.clients.size(),
      out.plan.makespan, parts,
      out.plan.note.empty() ? "" : absl::StrCat(" (", out.plan.note, ")"));
  return out;
}

absl::StatusOr<RoundMovePlan> RoundPlanner::PlanMoves(
    const std::vector<MovePlannedClient>& clients,
    const v1::TrainConfig& config) const {
  if (config.local_steps() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data moves plan whole epochs, but the job trains local_steps=",
        config.local_steps(), " per round; use local_steps=0"));
  }
  RoundMovePlan out;
  std::vector<std::string> ids;
  for (const MovePlannedClient& c : clients) ids.push_back(c.id);
  const std::optional<MedianCapacity> median = MedianOf(ids);
  MoveRequest& request = out.request;
  request.epochs = std::max<int>(1, static_cast<int>(config.local_epochs()));
  request.unit = std::max<uint64_t>(1, config.batch_size());
  request.bytes_per_sample = 0;
  int allowing = 0;
  for (const MovePlannedClient& c : clients) {
    MoveClient m;
    m.id = c.id;
    m.samples = c.num_samples;
    m.allows_moves = c.allows_moves;
    allowing += c.allows_moves ? 1 : 0;
    if (auto e = estimator_.Get(c.id)) {
      m.seconds_per_sample = e->seconds_per_sample;
      m.fixed_seconds = e->transfer_seconds();
      m.upload_seconds_per_byte = e->upload_seconds_per_byte;
      m.download_seconds_per_byte = e->download_seconds_per_byte;
    } else if (median) {
      m.seconds_per_sample = median->seconds_per_sample;
      m.fixed_seconds = median->transfer_seconds;
      m.upload_seconds_per_byte = median->upload_seconds_per_byte;
      m.download_seconds_per_byte = median->download_seconds_per_byte;
    }
    request.bytes_per_sample =
        std::max(request.bytes_per_sample, c.sample_bytes);
    request.clients.push_back(m);
  }
  if (request.bytes_per_sample == 0) request.bytes_per_sample = 785;
  if (!median || allowing < 2) {
    out.plan = NoMoves(request);
    out.summary = absl::StrCat(
        "data moves: none this round (",
        !median
            ? "no client measured yet"
            : absl::StrCat(allowing, " selected client(s) allow data moves"),
        ")");
    return out;
  }
  absl::StatusOr<MovePlan> plan =
      options_.planner == "ilp"
          ? IlpMoves(request, options_.ilp_time_limit_seconds)
          : GreedyMoves(request);
  if (!plan.ok()) return plan.status();
  out.plan = *std::move(plan);
  uint64_t moved = 0;
  std::string parts;
  for (const DataMove& m : out.plan.moves) {
    moved += m.samples;
    absl::StrAppendFormat(&parts, "%s%s->%s %d", parts.empty() ? "" : ", ",
                          request.clients[m.from].id, request.clients[m.to].id,
                          m.samples);
  }
  out.summary = absl::StrFormat(
      "data moves by %s: %d samples in %d moves%s%s, predicted makespan %.2f "
      "s (%.2f s without moves)%s",
      out.plan.planner, moved, out.plan.moves.size(), parts.empty() ? "" : ": ",
      parts, out.plan.makespan, MoveMakespan(request, NoMoves(request).samples),
      out.plan.note.empty() ? "" : absl::StrCat(" (", out.plan.note, ")"));
  return out;
}

}  // namespace fedberry::server::planner
