// A checked join's way into the registry, under the job's lock: the
// declared data size is bounded against the fleet's, the registry must have
// room, and a board that joins again under its name retires its old id —
// the new one takes the old one's place in the open round, so the board
// resumes there, and an update it already pushed stays counted.
// Thread-safety: every method runs under the job's lock (JobState::mu).
#ifndef FEDBERRY_SERVER_ROUND_BOARD_JOINS_H_
#define FEDBERRY_SERVER_ROUND_BOARD_JOINS_H_

#include <string>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "server/declared_size_bound.h"
#include "server/long_polls.h"
#include "server/round/job_state.h"
#include "server/round/round_closing.h"
#include "server/round/round_kind.h"

namespace fedberry::server {

// The coordinator's parts a join goes through; they outlive it.
struct JoinParts {
  JobState& job;
  RoundKind& kind;
  LongPolls& polls;                   // an old id's parked poll hears it
  DeclaredSizeBound& declared_bound;  // under job.mu
  RoundClosing& closing;              // its evaluation: who is asked
};

class BoardJoins {
 public:
  explicit BoardJoins(JoinParts parts) : parts_(parts) {}

  // Registers the board of `request` (checked, and admitted by the join
  // gate), sent by `caller`, and returns its new id; the error, naming the
  // board, when its declared size is out of bounds or the registry is full.
  absl::StatusOr<std::string> Add(const v1::JoinRequest& request,
                                  const std::string& caller)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);

 private:
  // Retires the ids board `name` held before `id`.
  void RetireEarlierIds(const std::string& name, const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);

  const JoinParts parts_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_BOARD_JOINS_H_
