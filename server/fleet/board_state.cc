#include "server/fleet/board_state.h"

namespace fedberry::server {

const char* BoardStateName(BoardState state) {
  switch (state) {
    case BoardState::kIdle:
      return "idle";
    case BoardState::kTraining:
      return "training";
    case BoardState::kEvaluating:
      return "evaluating";
    case BoardState::kPaused:
      return "paused";
    case BoardState::kReleased:
      return "released";
    case BoardState::kDeclined:
      return "declined";
    case BoardState::kRefused:
      return "refused";
    case BoardState::kGone:
      return "gone";
  }
  return "unknown";
}

BoardState StateOf(const BoardFacts& facts) {
  if (!facts.heard_recently) return BoardState::kGone;
  if (facts.update_refused) return BoardState::kRefused;
  if (facts.training) {
    switch (facts.heartbeat) {
      case v1::HeartbeatRequest::PAUSED:
        return BoardState::kPaused;
      case v1::HeartbeatRequest::RELEASED:
        return BoardState::kReleased;
      default:
        return BoardState::kTraining;
    }
  }
  if (facts.evaluating) return BoardState::kEvaluating;
  if (facts.declining) return BoardState::kDeclined;
  return BoardState::kIdle;
}

}  // namespace fedberry::server
