// The server's round state machine: takes boards' messages under the job's
// lock, parks task polls, and hands accepted updates to the job's
// aggregation strategy (the update path). Joins go through BoardJoins,
// tasks, heartbeats and evaluation answers through BoardTasks. Rounds are
// opened by RoundOpening (the cohort) and closed by RoundClosing
// (aggregate, evaluate, persist, report) when the kind's close rule says
// so: every selected client reported or, at the deadline, a quorum did. All
// of them share the job's state (JobState) under its lock.
//
//   WAITING (for clients) -> COLLECTING -> (RunOnce closes) -> WAITING ... DONE
//
// RPC threads call Join/GetTask/ModelFor/BeginUpdate/SubmitUpdate; one driver
// thread calls RunOnce, which does the slow work (aggregation, evaluation)
// outside the lock. Time comes from an injected Clock so deadline behaviour is
// testable without waiting. Thread-safe.
#ifndef FEDBERRY_SERVER_ROUND_COORDINATOR_H_
#define FEDBERRY_SERVER_ROUND_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "runtime/trainable_set.h"
#include "server/declared_size_bound.h"
#include "server/fleet/fleet_status.h"
#include "server/fleet/refused_joins.h"
#include "server/input_checks.h"
#include "server/long_polls.h"
#include "server/planner/round_planner.h"
#include "server/round/board_joins.h"
#include "server/round/board_tasks.h"
#include "server/round/client_registry.h"
#include "server/round/close_rule.h"
#include "server/round/cohort_selection.h"
#include "server/round/coordinator_options.h"
#include "server/round/job_rules.h"
#include "server/round/job_state.h"
#include "server/round/join_gate.h"
#include "server/round/round_budget.h"
#include "server/round/round_closing.h"
#include "server/round/round_kind.h"
#include "server/round/round_opening.h"
#include "server/round/round_source.h"
#include "server/round/round_types.h"
#include "server/sample_relay.h"
#include "server/strategy/strategy.h"
#include "server/update_bound.h"

namespace fedberry::server {

class RoundCoordinator {
 public:
  // `evaluator` and `sink` may be empty. `clock` must outlive this object.
  // `strategy`: the job's aggregation; null: the one options.strategy names.
  // InvalidArgument naming the option a job of `initial` cannot run with
  // (JobRules::Create).
  static absl::StatusOr<std::unique_ptr<RoundCoordinator>> Create(
      CoordinatorOptions options, runtime::NamedTensors initial,
      Evaluator evaluator, ReportSink sink, Clock& clock = Clock::Real(),
      std::unique_ptr<Strategy> strategy = nullptr);
  // Waits for an overlapped evaluation still running.
  ~RoundCoordinator();

  // Continues a job from a snapshot: global model, round, registry, history
  // and the strategy's state. Call before serving. InvalidArgument when the
  // snapshot's model layout differs from this job's model, or its strategy
  // state from this job's strategy.
  absl::Status Restore(const FederationSnapshot& snapshot);

  const CoordinatorOptions& options() const { return options_; }

  // Persists state after each round, and (asynchronous rounds) after each
  // update the buffer takes (set before serving). Called from the driver,
  // an overlapped evaluation and RPC threads: one at a time, and a
  // snapshot older than one already persisted is dropped.
  void SetSnapshotSink(SnapshotSink sink);

  // Registers a client. A client joining again under the same name replaces
  // its earlier registration (a restarted board), and takes over its place
  // in the open round, so it can resume that round's task, or, when it had
  // already pushed its update, its counted update. InvalidArgument for a
  // name that is empty, too long or not printable ASCII, or declared sizes
  // beyond `limits`; ResourceExhausted when max_clients are registered.
  // `caller` is who is behind the call (security::PeerIdentity::Owner):
  // boards of one caller share its asynchronous training slots.
  absl::StatusOr<v1::JoinResponse> Join(const v1::JoinRequest& request,
                                        const std::string& caller = "");

  // The client's task: TRAIN when it is in the open round's cohort and has
  // not reported, DONE after the last round, else WAIT. NotFound for an
  // unknown client id. `condition` is what the board says of its fitness
  // (GetTaskRequest.condition): a declining board is not selected, and a
  // selected one that declines before training is no longer awaited.
  using TaskAnswer = std::function<void(absl::StatusOr<v1::GetTaskResponse>)>;
  // A long poll for the task that holds no thread: returns the answer now
  // when there is one (TRAIN, DONE, NotFound); else parks `answer`, sets
  // `poll_id` (for CancelTaskPoll) and calls it once, on the long polls'
  // dispatcher thread, when an event concerns this client (a round that
  // selected it opened, the job ended, its id retired) or at `deadline`
  // (real time), with whatever the task is then.
  std::optional<absl::StatusOr<v1::GetTaskResponse>> PollTask(
      const std::string& client_id, const v1::BoardCondition& condition,
      absl::Time deadline, TaskAnswer answer, uint64_t& poll_id);
  // Takes a parked poll back (its caller went away): true when its answer
  // will never be called.
  bool CancelTaskPoll(uint64_t poll_id);
  // PollTask that blocks the calling thread up to `max_wait` (real time).
  absl::StatusOr<v1::GetTaskResponse> GetTask(
      const std::string& client_id, absl::Duration max_wait,
      const v1::BoardCondition& condition = {});
  // Long polls parked now.
  size_t parked_polls() const { return polls_.parked(); }

  // The global model for the client's task. NotFound (unknown client),
  // FailedPrecondition (round not open or closed, client not selected),
  // InvalidArgument (wrong task id).
  absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>> ModelFor(
      const v1::PullModelRequest& request);

  // What an update's stream must follow: the tensor specs (the plan's update
  // encoding) and the global model its differences are taken from.
  struct UpdateExpectation {
    std::vector<v1::TensorSpec> specs;
    std::shared_ptr<const runtime::NamedTensors> global;
  };

  // Checks an update's header before its tensors are read, and returns
  // what its stream must follow. Same codes as ModelFor, plus AlreadyExists
  // for a second update in one round, InvalidArgument for a weight of zero
  // or beyond what its task allows (MaxUpdateWeight) or for training
  // figures that are not finite, and
  // FailedPrecondition with reason wire::kReasonSamplesMissing when the client
  // has data moves to send whose samples the server does not hold.
  absl::StatusOr<UpdateExpectation> BeginUpdate(const v1::UpdateHeader& header);

  // Re-checks the header and folds the update into the round's sum, outside
  // the coordinator's lock (other calls do not wait for the add). Returns
  // the number of updates the round holds. Errors as BeginUpdate, plus
  // InvalidArgument for bad tensors (wrong names/shapes, NaN/Inf, a distance
  // from the global model beyond max_update_ratio); a refused update leaves
  // everything unchanged. Implausible resource readings are dropped.
  absl::StatusOr<int> SubmitUpdate(const v1::UpdateHeader& header,
                                   const runtime::NamedTensors& update);

  // A client's training is paused (or runs again, or it released its
  // memory) under memory pressure. Same codes as ModelFor.
  absl::Status Heartbeat(const v1::HeartbeatRequest& request);

  // A board's evaluation of the model it was asked to evaluate (an
  // EVALUATE task), or its reason to decline. NotFound (unknown client),
  // FailedPrecondition (no evaluation open, or not asked), AlreadyExists
  // (answered before), InvalidArgument (wrong task id, bad figures; see
  // CheckEvaluationReport).
  absl::Status ReportEvaluation(const v1::EvaluationReport& report);

  // A board's step in the open round's secure-aggregation session
  // (SecAggRounds::Step). FailedPrecondition when rounds are not securely
  // aggregated.
  // `peer_certificate`: for a keys message, the caller's client certificate
  // (PEM) under mutual TLS; else empty.
  absl::StatusOr<v1::SecAggResponse> SecAggStep(
      const v1::SecAggRequest& request, const std::string& peer_certificate);
  // SecAggStep whose wait for a stage (`await`) holds no thread and no
  // RPC traffic: answers now unless the answer is WAIT; else parks
  // `answer`, sets `poll_id` (for CancelTaskPoll) and calls it once, on the
  // long polls' dispatcher thread, when the session moves on for this board
  // (a stage closed, the session gave up) or at `deadline`.
  using SecAggAnswer = std::function<void(absl::StatusOr<v1::SecAggResponse>)>;
  std::optional<absl::StatusOr<v1::SecAggResponse>> PollSecAggStep(
      const v1::SecAggRequest& request, const std::string& peer_certificate,
      absl::Time deadline, SecAggAnswer answer, uint64_t& poll_id);

  // A known client was heard from by a call that reached no other method
  // (a push refused as busy): it still counts as live, so the end's DONE
  // grace waits for it. Unknown ids are ignored.
  void Seen(const std::string& client_id);

  // The name a client id was registered under; NotFound for an unknown id.
  absl::StatusOr<std::string> NameOf(const std::string& client_id) const;

  // The name of a client for its task's messages (data moves). Same codes
  // as ModelFor.
  absl::StatusOr<std::string> ClientNameForTask(const std::string& client_id,
                                                uint64_t round,
                                                const std::string& task_id);
  // The open round's data moves and their samples.
  SampleRelay& relay() { return relay_; }
  absl::Duration data_move_wait() const { return options_.data_move_wait; }

  // Counts a refused update (for the round report).
  void CountRejected();
  // Counts an update refused for what it carried (a malformed stream, wrong
  // tensors, NaN, beyond the update bound): a selected board of the open
  // round is then no longer awaited, as it does not send that task again
  // (it waits for the next round), so the round closes on the others.
  // `why` is kept as the board's last refusal, for the fleet page.
  void CountRefusedUpdate(const v1::UpdateHeader& header,
                          const std::string& why);

  // Every board as the fleet page shows it (registered ones, then those
  // refused at join), by name.
  std::vector<BoardRow> Boards() const;

  // Tiers (options.upstream): the round to run next, with the parent's model
  // and config; it replaces an offer not yet run. InvalidArgument when the
  // model's layout is not this job's.
  absl::Status OfferRound(UpstreamRound round);

  // One step of the round driver: opens a round when enough clients are
  // available, closes it when complete or past its deadline. Returns true if
  // it changed state.
  bool RunOnce();

  // Waits (real time) up to `timeout` for a state change worth a RunOnce.
  void WaitForWork(absl::Duration timeout);

  // Stops the job: long polls return, later tasks are DONE.
  void Shutdown();

  // Waits until the overlapped evaluation of the last closed round (if one
  // runs) has reported. Call from the driver's thread (the one that calls
  // RunOnce).
  void FinishPendingEvaluation();

  bool done() const;
  // What the job does now, for people: "waiting for boards", "training",
  // "aggregating", "evaluating on the boards" or "done".
  const char* phase() const;
  uint64_t current_round() const;
  // The job's rounds: the options' own, or a gateway's parent's as its
  // last offer said (0 before the first).
  uint32_t total_rounds() const;
  std::shared_ptr<const runtime::NamedTensors> global_model() const;
  // What the job trains, and so what an update carries.
  const runtime::TrainableSet& trainable() const { return rules_->trainable(); }
  // The closed rounds' summaries (their per-board entries went to the
  // ReportSink only).
  std::vector<RoundReport> history() const;
  // Registered clients not yet told the job is DONE that asked for a task
  // within `heard_within` (boards restored from a checkpoint count once
  // they ask): boards that will still ask.
  int clients_awaiting_done(absl::Duration heard_within) const;
  int registered_clients() const;
  // Samples the registered clients declared, summed.
  uint64_t registered_samples() const;

 private:
  RoundCoordinator(CoordinatorOptions options, Evaluator evaluator,
                   Clock& clock);
  // Makes the job's rules and the parts, on `initial`.
  absl::Status Wire(runtime::NamedTensors initial, ReportSink sink,
                    std::unique_ptr<Strategy> strategy);

  // `update` made whole (--trainable) on `base`, checked against its
  // layout and `bound` (may be null); `distance` is the bound's reading.
  absl::StatusOr<runtime::NamedTensors> CheckedWhole(
      const runtime::NamedTensors& update, const runtime::NamedTensors& base,
      const UpdateBound* bound, double& distance) const;
  // Adds `whole`, the update of `header` from a sender that declared
  // `boards`, to `sum` (AddToRound) under the add lock (an aggregator is
  // not thread-safe), outside job_.mu.
  absl::Status AddToSum(RoundAggregator& sum, const v1::UpdateHeader& header,
                        uint32_t boards, const runtime::NamedTensors& whole);
  // A claimed update on its way into the sum, outside job_.mu: the model it is
  // added to, the sum, its sender's name and the boards it speaks for (a
  // site gateway's sum is bounded by them), and its staleness.
  struct Intake {
    std::shared_ptr<const runtime::NamedTensors> current;
    RoundAggregator* sum = nullptr;
    std::string name;
    uint32_t boards = 0;
    std::optional<int> staleness;
  };
  // Waits while the kind takes no push, re-checks the header and claims
  // the update of `untrusted`, trained on `base`.
  absl::StatusOr<Intake> ClaimUpdate(
      const v1::UpdateHeader& untrusted,
      const std::shared_ptr<const runtime::NamedTensors>& base);
  // A push is taken now (or the job ended: it hears so).
  bool TakesPushLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_.mu);
  absl::StatusOr<v1::SecAggResponse> SecAggStepLocked(
      const v1::SecAggRequest& request, const std::string& peer_certificate)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_.mu);
  // Books an added update of board `id` (its figures, the planner's
  // capacity reading, the round's report); returns the updates the round
  // holds.
  // `staleness`: an asynchronous round's update's.
  int AcceptUpdateLocked(const std::string& id,
                         const v1::UpdateHeader& untrusted, double distance,
                         std::optional<int> staleness, const Settled& settled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_.mu);
  // Checks the parts of an update's header that need no tensors, for `use`
  // (kPushBegin: a late update is refused first).
  absl::Status CheckHeaderLocked(const v1::UpdateHeader& header, TaskUse use)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(job_.mu);

  const CoordinatorOptions options_;
  const Evaluator evaluator_;
  Clock& clock_;

  // The job's phase, round, model, boards and round in progress, and their
  // one owner; its lock guards what the parts below say is under mu.
  JobState job_;
  std::vector<v1::TensorSpec> specs_ ABSL_GUARDED_BY(job_.mu);
  // Boards refused at join, for the fleet page (its own lock).
  RefusedJoins refused_joins_{1024};
  JoinGate join_gate_;
  // Serializes adds into the open round's sum (an aggregator is not
  // thread-safe); taken without job_.mu held.
  absl::Mutex add_mu_;
  // The fleet's median declaration, taken when a round opens.
  DeclaredSizeBound declared_bound_ ABSL_GUARDED_BY(job_.mu);
  SampleRelay relay_;  // has its own lock: pulls wait on it, not on mu
  // What the job runs by: its rounds' source and kind, its strategy, budget
  // and planner (JobRules says which are under mu); made once, never
  // replaced.
  std::unique_ptr<JobRules> rules_;
  // Closes, publishes and snapshots rounds, and holds one while the boards
  // evaluate it; the driver's.
  std::unique_ptr<RoundClosing> closing_;
  // Opens rounds (and an evaluate-only job's evaluation).
  std::unique_ptr<RoundOpening> opening_;
  std::unique_ptr<BoardJoins> joins_;
  std::unique_ptr<BoardTasks> tasks_;
  // Parked task polls, woken (under mu) by the events that concern them.
  // Last, so it answers what is still parked before the rest goes.
  LongPolls polls_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_COORDINATOR_H_
