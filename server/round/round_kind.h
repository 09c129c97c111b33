// A kind of round: how the coordinator's open round hands out tasks, takes
// updates and decides to close. Two kinds exist: synchronous rounds
// (SyncRounds: a drawn cohort, each board one update, the close rule) and
// asynchronous buffered versions (AsyncRounds: boards take tasks as they
// ask, updates are weighted by staleness, a version closes when its buffer
// is full). The coordinator keeps the lock, the long polls, the strategy
// and the update path's steps, and asks its kind at each step instead of
// branching on it.
//
// Thread-compatible: every call but Prepare is made under the coordinator's
// lock (JobState::mu), which also guards what the RoundContext a kind is
// given refers to.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_KIND_H_
#define FEDBERRY_SERVER_ROUND_ROUND_KIND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/long_polls.h"
#include "server/planner/round_planner.h"
#include "server/round/board_messages.h"
#include "server/round/client_registry.h"
#include "server/round/close_rule.h"
#include "server/round/cohort_selection.h"
#include "server/round/job_state.h"
#include "server/round/round_phase.h"
#include "server/round/round_types.h"
#include "server/sample_relay.h"
#include "server/strategy/strategy.h"
#include "server/update_bound.h"

namespace fedberry::server {

// What a kind is given of the coordinator: the job's state (read; its
// registry of boards changed), the long polls, the data-move relay and the
// planner; guarded by the coordinator's lock.
struct RoundContext {
  JobState& job;
  LongPolls& polls;  // waking a board's parked poll
  SampleRelay& relay;
  planner::RoundPlanner* planner;  // null: every board trains job.train()
};

// A board's training task: the round whose model it trains and the task id
// its calls name.
struct TrainTask {
  uint64_t round = 0;
  std::string task_id;
  std::optional<uint64_t> seed;  // its own data order; else the round's
  // Its part in the round's secure-aggregation session, when there is one.
  std::optional<v1::SecAggTask> secagg;
};

// What a board's call speaks of its task for.
enum class TaskUse {
  kFollow,     // a pull of the task's model, a heartbeat
  kPushBegin,  // an update's header, before any tensor (a late one refused)
  kPush,       // an update being checked or claimed
};

// The model a board's task trains from, and the bound its update is checked
// against (null: none kept; one is made on `model`, outside the lock).
struct TaskBase {
  std::shared_ptr<const runtime::NamedTensors> model;
  std::shared_ptr<const UpdateBound> bound;
};

// An added update's place: the updates the open round holds, how many
// close it, and whether each is made durable before its board hears it
// counted (an asynchronous buffer outlives a restart).
struct Settled {
  size_t held = 0;
  size_t of = 0;
  bool persist = false;
};

class RoundKind {
 public:
  virtual ~RoundKind() = default;

  // Opening. The cohort of the round to open from the `available` boards,
  // drawn with `rng` (Cohort::too_few: it cannot run; it is charged and
  // drawn again).
  virtual Cohort Draw(std::vector<std::string> available,
                      std::mt19937_64& rng) const = 0;
  // Opens job.round() on job.global() for `cohort` (`rng` names its task),
  // collecting into `sum`; wakes the boards it concerns and says so.
  virtual void Open(const Cohort& cohort, std::mt19937_64& rng, int available,
                    RoundAggregator& sum) = 0;

  // Tasks. `id`'s training task now, if it has one (may assign one).
  virtual std::optional<TrainTask> TaskFor(const std::string& id,
                                           const ClientRecord& client) = 0;
  // Whether `id` (registered) may speak of task (`round`, `task_id`) now,
  // for `use`: the codes of RoundCoordinator::ModelFor; for a push,
  // AlreadyExists when its update of the open round is counted; for a
  // push's header, first the refusal (reason kReasonLateUpdate, counted in
  // the next report) of an update of a round that closed without it.
  virtual absl::Status CheckTask(const std::string& id, uint64_t round,
                                 const std::string& task_id, TaskUse use) = 0;
  // What `id`'s task trains from. FailedPrecondition when it is gone.
  virtual absl::StatusOr<TaskBase> BaseOf(const std::string& id) const = 0;

  // Updates. A push is taken now (false: it waits while a version is
  // published).
  virtual bool TakesPush() const = 0;
  // Claims `id`'s update, trained on `base`, before it is added; returns
  // its staleness when the kind weighs it.
  virtual absl::StatusOr<std::optional<int>> Claim(
      const std::string& id,
      const std::shared_ptr<const runtime::NamedTensors>& base) = 0;
  // What is added to the sum of the model `current`: `whole` as it is, or
  // moved onto `current` and weighted by `staleness`. Called without the
  // lock: it reads only the kind's options.
  virtual runtime::NamedTensors Prepare(runtime::NamedTensors whole,
                                        const runtime::NamedTensors& base,
                                        const runtime::NamedTensors& current,
                                        std::optional<int> staleness) const = 0;
  // The claimed update's add ended: `added` (as Prepare made it) is in the
  // sum, or, nullopt, the add failed and `id` may push again.
  virtual Settled Settle(const std::string& id, std::optional<int> staleness,
                         std::optional<runtime::NamedTensors> added,
                         uint64_t samples) = 0;

  // Boards. `id` joined again as `new_id`: it keeps its task.
  struct Renamed {
    bool selected = false;
    bool reported = false;
  };
  virtual Renamed Rename(const std::string& id, const std::string& new_id) = 0;
  // Board `id` gives its place up: its update (`refused`, of a task) was
  // refused for what it carried, or (`refused` null) it declines rounds
  // now. True when the round stopped awaiting it.
  virtual bool Release(const std::string& id,
                       const v1::UpdateHeader* refused) = 0;
  // `id`'s part in the open round (BoardPart::held: the round holds it, so
  // it is never pruned).
  virtual BoardPart PartOf(const std::string& id) const = 0;

  // Closing. Whether the open round closes now (`decision` says how).
  virtual bool Closes(CloseDecision& decision) = 0;
  // The closing round's figures into `report` (selected, participants,
  // dropped, declined, ...); no round is open after it.
  virtual void Close(RoundReport& report) = 0;

  // The checkpoint's part of this kind, and its resumption.
  virtual std::optional<AsyncState> State() const = 0;
  virtual void Restore(const std::optional<AsyncState>& state) = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_KIND_H_
