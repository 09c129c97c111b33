// What a job does now: the round core's state machine (JobState owns it).
// Thread-safety: values and pure functions.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_PHASE_H_
#define FEDBERRY_SERVER_ROUND_ROUND_PHASE_H_

namespace fedberry::server {

enum class RoundPhase { kWaiting, kCollecting, kClosing, kEvaluating, kDone };

// The phase for people: "waiting for boards", "training", "aggregating",
// "evaluating on the boards" or "done".
constexpr const char* PhaseName(RoundPhase phase) {
  switch (phase) {
    case RoundPhase::kWaiting:
      return "waiting for boards";
    case RoundPhase::kCollecting:
      return "training";
    case RoundPhase::kClosing:
      return "aggregating";
    case RoundPhase::kEvaluating:
      return "evaluating on the boards";
    case RoundPhase::kDone:
      return "done";
  }
  return "unknown";
}

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_PHASE_H_
