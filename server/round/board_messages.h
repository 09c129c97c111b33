// What a board's messages do to its ClientRecord, and how a record shows on
// the fleet page: a join makes the record, a heartbeat and a task poll's
// condition update it (saying in the log what changed), a row shows it.
// Pure functions over values, so the coordinator only looks records up and
// keeps them under its lock.
// Thread-safety: no state; callers guard the records they pass.
#ifndef FEDBERRY_SERVER_ROUND_BOARD_MESSAGES_H_
#define FEDBERRY_SERVER_ROUND_BOARD_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "server/fleet/fleet_status.h"
#include "server/round/client_registry.h"

namespace fedberry::server {

// The record of a board whose checked `request` joins at `now`.
ClientRecord RecordOfJoin(const v1::JoinRequest& request, absl::Time now);

// The log line of `record`'s join as `id`.
std::string JoinedLine(const ClientRecord& record, const std::string& id);

// Keeps a heartbeat's state and progress (of the open round `round`),
// logging a pause, a resumption or a release.
void NoteHeartbeat(ClientRecord& record, const v1::HeartbeatRequest& request,
                   uint64_t round);

// Keeps a task poll's (untrusted) `condition`, logging when the board
// starts or stops declining rounds. Returns whether it declines now.
bool NoteCondition(ClientRecord& record, const v1::BoardCondition& condition);

// A board's part in the open round (RoundKind::PartOf).
struct BoardPart {
  bool training = false;          // selected, its update not yet in
  bool update_refused = false;    // its update of the open round was refused
  std::optional<uint64_t> round;  // the round it trains, when training
  bool held = false;  // the open round holds it (selected, or training)
  std::optional<int64_t> planned_steps;  // the planner's local steps
};

// `record`'s row on the fleet page, given its `part` in the open round,
// whether it was heard within the liveness window and whether the open
// evaluation awaits it.
BoardRow RowOf(const ClientRecord& record, const BoardPart& part,
               bool heard_recently, bool evaluating);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_BOARD_MESSAGES_H_
