// The fleet profile of fedberry-sim (--fleet_profile): one line per client,
// in client order, of key=value fields; '#' starts a comment, blank lines
// are skipped. Example (four boards, the last one four times slower and
// holding half its shard):
//
//   # data_fraction  compute_slowdown  bandwidth_mbit
//   data_fraction=1   compute_slowdown=1
//   data_fraction=1   compute_slowdown=1
//   data_fraction=1   compute_slowdown=2
//   data_fraction=0.5 compute_slowdown=4 bandwidth_mbit=8
//
// data_fraction: share of the client's equal shard it keeps, (0, 1];
// compute_slowdown: the client trains this many times slower (>= 1);
// bandwidth_mbit: link rate to the server (0 or absent: unshaped).
// Thread-safety: plain data and pure functions.
#ifndef FEDBERRY_SIM_FLEET_PROFILE_H_
#define FEDBERRY_SIM_FLEET_PROFILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::sim {

struct BoardProfile {
  double data_fraction = 1.0;
  double compute_slowdown = 1.0;
  double bandwidth_mbit = 0;  // 0: unshaped
};

// InvalidArgument naming the line for an unknown key, a bad number or a
// value out of range; and for a profile without clients.
absl::StatusOr<std::vector<BoardProfile>> ParseFleetProfile(
    absl::string_view text);
// Reads and parses a file (NotFound when it cannot be read).
absl::StatusOr<std::vector<BoardProfile>> LoadFleetProfile(
    const std::string& path);

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_FLEET_PROFILE_H_
