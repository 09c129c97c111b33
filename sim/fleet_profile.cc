#include "sim/fleet_profile.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fedberry::sim {
namespace {

// Sets `key` of `board` to `value`; the error says what is wrong, and the
// caller where.
absl::Status SetKey(absl::string_view key, double value, BoardProfile& board) {
  if (key == "data_fraction") {
    if (!(value > 0) || value > 1) {
      return absl::InvalidArgumentError("data_fraction must be in (0, 1]");
    }
    board.data_fraction = value;
  } else if (key == "compute_slowdown") {
    if (!(value >= 1)) {
      return absl::InvalidArgumentError("compute_slowdown must be >= 1");
    }
    board.compute_slowdown = value;
  } else if (key == "bandwidth_mbit") {
    if (!(value >= 0)) {
      return absl::InvalidArgumentError("bandwidth_mbit must be >= 0");
    }
    board.bandwidth_mbit = value;
  } else if (key == "pause_every") {
    if (!(value >= 0) || value != std::floor(value) ||
        value > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(
          "pause_every must be a whole number >= 0 (0: never)");
    }
    board.pause_every = static_cast<int>(value);
  } else if (key == "pause_seconds") {
    if (!(value >= 0) || !std::isfinite(value)) {
      return absl::InvalidArgumentError("pause_seconds must be >= 0");
    }
    board.pause_seconds = value;
  } else if (key == "secagg_kill_round" || key == "secagg_kill_stage") {
    const double most = key == "secagg_kill_stage" ? 4 : 1e9;
    if (!(value >= 1) || value > most || value != std::floor(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, " must be a whole number from 1 to ", most));
    }
    (key == "secagg_kill_round" ? board.secagg_kill_round
                                : board.secagg_kill_stage) =
        static_cast<int>(value);
  } else if (key == "secagg_forge_signature") {
    if (value != 0 && value != 1) {
      return absl::InvalidArgumentError(
          "secagg_forge_signature must be 0 or 1");
    }
    board.secagg_forge_signature = value == 1;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown key '", key,
                     "' (use data_fraction, compute_slowdown, bandwidth_mbit, "
                     "pause_every, pause_seconds, secagg_kill_round, "
                     "secagg_kill_stage, secagg_forge_signature)"));
  }
  return absl::OkStatus();
}

// One line's fields (comment stripped, not empty).
absl::StatusOr<BoardProfile> ParseBoard(absl::string_view line) {
  BoardProfile board;
  for (absl::string_view field :
       absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(field, absl::MaxSplits('=', 1));
    double value = 0;
    if (!absl::SimpleAtod(kv.second, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", field, "' is not key=number"));
    }
    if (absl::Status set = SetKey(kv.first, value, board); !set.ok()) {
      return set;
    }
  }
  // A pause of no length, or one that never comes, is a typo.
  if ((board.pause_every > 0) != (board.pause_seconds > 0)) {
    return absl::InvalidArgumentError(
        "pause_every and pause_seconds are both set (> 0) or both absent");
  }
  if ((board.secagg_kill_round > 0) != (board.secagg_kill_stage > 0)) {
    return absl::InvalidArgumentError(
        "secagg_kill_round and secagg_kill_stage are both set or both absent");
  }
  return board;
}

}  // namespace

absl::StatusOr<std::vector<BoardProfile>> ParseFleetProfile(
    absl::string_view text) {
  std::vector<BoardProfile> out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    absl::StatusOr<BoardProfile> board = ParseBoard(line);
    if (!board.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fleet profile line ", number, ": ", board.status().message()));
    }
    out.push_back(*board);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError("fleet profile lists no clients");
  }
  return out;
}

absl::StatusOr<std::vector<BoardProfile>> LoadFleetProfile(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read fleet profile ", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseFleetProfile(buffer.str());
}

}  // namespace fedberry::sim
