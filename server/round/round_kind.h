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
// lock, which also guards every field of the RoundContext a kind is given.
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
#include "base/clock.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/long_polls.h"
#include "server/planner/round_planner.h"
#include "server/round/board_messages.h"
#include "server/round/client_registry.h"
#include "server/round/close_rule.h"
#include "server/round/cohort_selection.h"
#include "server/round/round_types.h"
#include "server/sample_relay.h"
#include "server/strategy/strategy.h"
#include "server/update_bound.h"

namespace fedberry::server {

// What the job does now (the coordinator's state machine).
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

// The coordinator's state a kind reads and changes, by reference; guarded
// by the coordinator's lock.
struct RoundContext {
  Clock& clock;
  ClientRegistry& clients;
  LongPolls& polls;  // waking a board's parked poll
  SampleRelay& relay;
  const RoundPhase& phase;
  const uint64_t& round;  // the open (or next) round
  const uint32_t& total_rounds;
  const v1::TrainConfig& train;  // what the open round's boards train
  const std::shared_ptr<const runtime::NamedTensors>& global;
  RoundReport& pending;            // the open round's report so far
  planner::RoundPlanner* planner;  // null: every board trains `train`
};

// A board's training task: the round whose model it trains and the task id
// its calls name.
struct TrainTask {
  uint64_t round = 0;
  std::string task_id;
  std::optional<uint64_t> seed;  // its own data order; else the round's
};

class RoundKind {
 public:
  virtual ~RoundKind() = default;

  // Opening. The cohort of the round to open from the `available` boards,
  // drawn with `rng`.
  virtual Cohort Draw(std::vector<std::string> available,
                      std::mt19937_64& rng) const = 0;
  // The drawn cohort is too small to run (it is charged and drawn again).
  virtual bool TooFew(const Cohort& cohort) const = 0;
  // Opens ctx.round on ctx.global for `cohort` (`rng` names its task),
  // collecting into `sum`; wakes the boards it concerns and says so.
  virtual void Open(const Cohort& cohort, std::mt19937_64& rng, int available,
                    RoundAggregator& sum) = 0;

  // Tasks. `id`'s training task now, if it has one (may assign one).
  virtual std::optional<TrainTask> TaskFor(const std::string& id,
                                           const ClientRecord& client) = 0;
  // Local steps the planner gave `id` this round, if any.
  virtual std::optional<int64_t> PlannedSteps(const std::string& id) const = 0;
  // Whether `id` may speak of task (`round`, `task_id`) now: the codes of
  // RoundCoordinator::ModelFor. `id` is registered.
  virtual absl::Status CheckTask(const std::string& id, uint64_t round,
                                 const std::string& task_id) const = 0;
  // AlreadyExists when `id`'s update of the open round is already counted.
  virtual absl::Status CheckNotCounted(const std::string& id,
                                       uint64_t round) const = 0;
  // The model `id`'s task trains from. FailedPrecondition when it is gone.
  virtual absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
  BaseModel(const std::string& id) const = 0;
  // The late update's refusal when `header` is of a round that closed
  // without it (counted in the next report); nullopt otherwise.
  virtual std::optional<absl::Status> RefuseLate(
      const v1::UpdateHeader& header) = 0;

  // Updates. The bound an update trained on `base` is checked against;
  // null when the kind keeps none for `base`: one is made on it, outside
  // the lock (a bound reads the whole model).
  virtual std::shared_ptr<const UpdateBound> BoundFor(
      std::shared_ptr<const runtime::NamedTensors> base) const = 0;
  // A push is taken now (false: it waits while a version is published).
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
  // The add failed: `id` may push again.
  virtual void Unclaim(const std::string& id) = 0;
  // The add succeeded (`added` as Prepare made it).
  virtual void Accept(const std::string& id, std::optional<int> staleness,
                      runtime::NamedTensors added, uint64_t samples) = 0;
  // Updates the open round holds, and how many close it.
  virtual std::pair<size_t, size_t> Held() const = 0;
  // Every accepted update is made durable before its board hears it
  // counted (its buffer outlives a restart).
  virtual bool PersistsEachUpdate() const = 0;

  // Boards. `id` joined again as `new_id`: it keeps its task.
  struct Renamed {
    bool selected = false;
    bool reported = false;
  };
  virtual Renamed Rename(const std::string& id, const std::string& new_id) = 0;
  // `header`'s update was refused for what it carried: true when the round
  // stopped awaiting its board.
  virtual bool Refused(const v1::UpdateHeader& header) = 0;
  // `id` declines rounds now: true when it gave up a place it held.
  virtual bool Declines(const std::string& id) = 0;
  virtual BoardPart PartOf(const std::string& id) const = 0;
  // Boards the open round holds (never pruned).
  virtual const std::set<std::string>& Members() const = 0;

  // Closing. Whether the open round closes now (`decision` says how).
  virtual bool Closes(CloseDecision& decision) = 0;
  // The closing round's figures into `report` (participants, dropped).
  virtual void Close(RoundReport& report) = 0;
  // No round is open (closed, or given up).
  virtual void Clear() = 0;

  // The checkpoint's part of this kind, and its resumption.
  virtual std::optional<AsyncState> State() const = 0;
  virtual void Restore(const std::optional<AsyncState>& state) = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_KIND_H_
