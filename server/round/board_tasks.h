// What a board asking for work is told, and the checks that what it sends
// belongs to the task it was given: the open round's kind says who trains
// (and on which model), the held evaluation who evaluates; everyone else
// waits, or hears the job is done. Each answer also marks the board seen.
// The fleet page shows the same: each board's part in the open round.
// Thread-safety: every method runs under the job's lock (JobState::mu).
#ifndef FEDBERRY_SERVER_ROUND_BOARD_TASKS_H_
#define FEDBERRY_SERVER_ROUND_BOARD_TASKS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/declared_size_bound.h"
#include "server/fleet/fleet_status.h"
#include "server/round/job_state.h"
#include "server/round/round_closing.h"
#include "server/round/round_kind.h"
#include "server/sample_relay.h"

namespace fedberry::server {

// The coordinator's parts a task goes through; they outlive it.
struct TaskParts {
  JobState& job;
  RoundKind& kind;
  RoundClosing& closing;  // holds the evaluation on the boards
  SampleRelay& relay;     // the data moves a trainer's task carries
};

class BoardTasks {
 public:
  explicit BoardTasks(TaskParts parts) : parts_(parts) {}

  // The task for board `id`: train, evaluate, wait or done. NotFound for
  // an id the registry does not know (any more).
  absl::StatusOr<v1::GetTaskResponse> Answer(const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // The training config of `id`'s task: the job's, with the planner's
  // steps for it when the round was planned.
  v1::TrainConfig ConfigFor(const std::string& id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // OK when `id` is registered and trains `round` under `task_id`.
  absl::Status Check(const std::string& id, uint64_t round,
                     const std::string& task_id, TaskUse use = TaskUse::kFollow)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // Check, then the board's record with its last_seen stamped now.
  absl::StatusOr<ClientRecord*> CheckedAndSeen(const std::string& id,
                                               uint64_t round,
                                               const std::string& task_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // The model `request`'s board is to pull: the held evaluation's, or the
  // one its training task starts from.
  absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>> ModelFor(
      const v1::PullModelRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // The name of the board that trains `round` under `task_id` as `id`.
  absl::StatusOr<std::string> NameForTask(const std::string& id, uint64_t round,
                                          const std::string& task_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // A heartbeat of the board training `request`'s task: its state and
  // progress kept (a pause may let the open round close).
  absl::Status Heartbeat(const v1::HeartbeatRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // A board's answer to the held evaluation (see HeldEvaluation::Accept),
  // its held-out samples bounded by its declaration as `bound` caps it.
  absl::Status AcceptEvaluation(const v1::EvaluationReport& report,
                                const DeclaredSizeBound& bound)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // Keeps the (untrusted) condition a board's poll declares; a board that
  // starts declining may let the open round close.
  void NoteCondition(const std::string& id, const v1::BoardCondition& untrusted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // The fleet page's row of each registered board, `liveness` being how
  // recently a board must have been heard to count as there.
  std::vector<BoardRow> Rows(absl::Duration liveness) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);

 private:
  const TaskParts parts_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_BOARD_TASKS_H_
