// What a board is doing, as the fleet page shows it, derived from what the
// server knows of it: a pure function, so the page's states are tested as a
// table without a server.
// Thread-safety: pure functions, thread-safe.
#ifndef FEDBERRY_SERVER_FLEET_BOARD_STATE_H_
#define FEDBERRY_SERVER_FLEET_BOARD_STATE_H_

#include "fedberry/v1/federation.pb.h"

namespace fedberry::server {

enum class BoardState {
  kIdle,        // registered, nothing to do now
  kTraining,    // selected for the open round, its update not yet in
  kEvaluating,  // asked to evaluate the round's model on its own data
  kPaused,      // training paused under memory pressure
  kReleased,    // checkpointed and freed its memory; its supervisor restarts it
  kDeclined,    // sits rounds out (its condition says why)
  kRefused,     // its join or its update was refused (the row says why)
  kGone,        // not heard from within the liveness window
};

inline constexpr BoardState kBoardStates[] = {
    BoardState::kIdle,    BoardState::kTraining, BoardState::kEvaluating,
    BoardState::kPaused,  BoardState::kReleased, BoardState::kDeclined,
    BoardState::kRefused, BoardState::kGone};

// "idle", "training", ...: the names the page and /api/fleet.json carry.
const char* BoardStateName(BoardState state);

struct BoardFacts {
  bool heard_recently = true;   // within the server's liveness window
  bool training = false;        // in the open cohort, not yet reported
  bool evaluating = false;      // awaited by the open evaluation
  bool update_refused = false;  // its update of the open round was refused
  bool declining = false;       // its last task poll declined
  v1::HeartbeatRequest::State heartbeat = v1::HeartbeatRequest::TRAINING;
};

// Gone before anything else (the rest is stale then); a refused update
// before the round's states; paused and released only while training.
BoardState StateOf(const BoardFacts& facts);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FLEET_BOARD_STATE_H_
