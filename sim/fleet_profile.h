// The fleet profile of fedberry-sim (--fleet_profile): one line per client,
// in client order, of key=value fields; '#' starts a comment, blank lines
// are skipped. Example (four boards, the third one twice as slow and
// stopping for 20 s on every second task, the last one four times slower
// and holding half its shard):
//
//   # data_fraction  compute_slowdown  bandwidth_mbit  pause_every/seconds
//   data_fraction=1   compute_slowdown=1
//   data_fraction=1   compute_slowdown=1
//   data_fraction=1   compute_slowdown=2 pause_every=2 pause_seconds=20
//   data_fraction=0.5 compute_slowdown=4 bandwidth_mbit=8
//
// data_fraction: share of the client's equal shard it keeps, (0, 1];
// compute_slowdown: the client trains this many times slower (>= 1);
// bandwidth_mbit: link rate to the server (0 or absent: unshaped);
// pause_every, pause_seconds: on every N-th task it trains the client
// stands still for S seconds before it pushes, as a board whose watchdog
// paused it under memory pressure (N a whole number; both > 0, or both
// absent: never). It sends no heartbeat meanwhile: past the server's
// liveness period (2 min) it loses its task.
// secagg_kill_round, secagg_kill_stage: with --secure_aggregation, the
// client kills itself (SIGKILL) in that round just before it sends its
// message of that stage (1 advertise keys, 2 share keys, 3 masked input,
// 4 unmask); both or neither. secagg_forge_signature=1: the client's key
// signature does not match its certificate (the gateway refuses its keys).
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
  int pause_every = 0;        // 0: never paused
  double pause_seconds = 0;
  // Secure aggregation's dropouts: in round secagg_kill_round the client
  // kills itself just before its message of stage secagg_kill_stage (1..4).
  int secagg_kill_round = 0;  // 0: never
  int secagg_kill_stage = 0;
  bool secagg_forge_signature = false;  // its key signatures do not verify
};

// InvalidArgument naming the line for an unknown key, a bad number, a value
// out of range or a pause key without the other; and for a profile without
// clients.
absl::StatusOr<std::vector<BoardProfile>> ParseFleetProfile(
    absl::string_view text);
// Reads and parses a file (NotFound when it cannot be read).
absl::StatusOr<std::vector<BoardProfile>> LoadFleetProfile(
    const std::string& path);

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_FLEET_PROFILE_H_
