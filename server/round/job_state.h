// A job's state, and its one owner: the phase, the round and its attempt,
// the model boards train from, the boards, the open round's sum and report
// so far, and the closed rounds, all under one lock. Every change of phase
// is a method that checks it starts from a phase it may (a transition from
// the wrong one is FailedPrecondition naming both and changes nothing), so
// the job's state machine is here and nowhere else:
//
//   kWaiting --Collect--> kCollecting --StartClosing--> kClosing
//   kClosing --Reopen/Abandon--> kWaiting     kClosing --Finish--> kDone
//   kClosing/kWaiting --HoldForBoards--> kEvaluating
//   kEvaluating --EndBoardEvaluation--> kWaiting, kClosing or kDone
//   any --Stop--> kDone (kClosing finishes first)
//
// The parts of the round core read it and ask it to change; the registry
// of boards keeps its own state (ClientRegistry) and is reached through it.
// Thread-safety: every method needs `mu` held (the parts' methods run under
// it); `mu` is the coordinator's one lock.
#ifndef FEDBERRY_SERVER_ROUND_JOB_STATE_H_
#define FEDBERRY_SERVER_ROUND_JOB_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/round/client_registry.h"
#include "server/round/job_history.h"
#include "server/round/round_phase.h"
#include "server/round/round_source.h"
#include "server/round/round_types.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

class JobState {
 public:
  JobState(Clock& clock, int max_clients)
      : clock_(clock), clients_(max_clients) {}
  JobState(const JobState&) = delete;
  JobState& operator=(const JobState&) = delete;

  // The lock over all of it (and the parts' state said to be under it).
  mutable absl::Mutex mu;

  Clock& clock() const { return clock_; }
  RoundPhase phase() const { return phase_; }
  // The open round, or the next one to open.
  uint64_t round() const { return round_; }
  int attempt() const { return attempt_; }  // restarts of round()
  // What the open round's boards train (the job's config seeded per round,
  // or the parent's), and the job's rounds as boards are told.
  const v1::TrainConfig& train() const { return train_; }
  uint32_t total_rounds() const { return total_rounds_; }
  const std::shared_ptr<const runtime::NamedTensors>& global() const {
    return global_;
  }
  const JobHistory& history() const { return history_; }
  bool stopping() const { return shutdown_; }
  absl::Time round_start() const { return round_start_; }
  // The open round's sum (null outside kCollecting and kClosing).
  RoundAggregator* sum() const { return aggregate_.get(); }
  // The boards; the registry keeps its own state.
  ClientRegistry& clients() { return clients_; }
  const ClientRegistry& clients() const { return clients_; }

  // --- The phase's transitions. Each is FailedPrecondition from a phase
  // it may not start from, and then changes nothing.

  // The job as it starts: its initial model, its config, its rounds as its
  // source says; `ended`: none left (kDone).
  void Start(std::shared_ptr<const runtime::NamedTensors> global,
             v1::TrainConfig train, uint32_t total_rounds, bool ended);
  // kWaiting: the round to open next (`opening`); a new round, or a new
  // model for it, starts its attempts afresh.
  absl::Status Prepare(RoundSource::Opening opening);
  // kWaiting: the round's config as the job's budget shapes it.
  absl::Status Shape(v1::TrainConfig train);
  // kWaiting: the drawn cohort could not run; the next attempt draws again.
  absl::Status SkipAttempt();
  // kWaiting -> kCollecting: the round collects into `sum`; `declining`
  // boards sit it out from the start.
  absl::Status Collect(std::unique_ptr<RoundAggregator> sum, int declining);
  // kCollecting -> kClosing: it takes no more updates.
  absl::Status StartClosing();
  // kClosing: the closing round's sum and report so far, once no add is in
  // flight (wait for AddsDone() first).
  struct Closing {
    std::unique_ptr<RoundAggregator> sum;
    RoundReport report;
  };
  absl::StatusOr<Closing> TakeClosing();
  // kClosing: the closed round is kept in the history and, when it has one
  // (`model` not null), its model is the job's; the next round is round()+1.
  absl::Status Commit(std::shared_ptr<const runtime::NamedTensors> model,
                      const RoundReport& report);
  // kClosing -> kWaiting: the next round may open.
  absl::Status Reopen();
  // kClosing -> kWaiting (kDone when stopping): the round starts over with
  // the same model, as its next attempt.
  absl::Status Abandon();
  // kClosing (a closed round) -> kEvaluating: the boards evaluate its model.
  absl::Status HoldForBoards();
  // kWaiting -> kEvaluating: an evaluate-only job evaluates `report`'s round
  // (round 0, the model as given), kept in the history.
  absl::Status HoldEvaluationOnly(const RoundReport& report);
  // kEvaluating -> kDone (stopping), kClosing (the job's last round: its end
  // is announced once it is published) or kWaiting; the boards' figures of
  // `report` join the history. From kDone (stopped meanwhile): stays.
  absl::Status EndBoardEvaluation(const RoundReport& report, bool finished);
  // kClosing (the last round, published) or kDone -> kDone.
  absl::Status Finish();
  // Any phase: the job stops; kDone unless a round is closing (it finishes).
  void Stop();
  // Before the first round (kWaiting, or kDone for a job its source ended):
  // the job resumes at `next_round` with `global` and `history`; kDone when
  // `ended`.
  absl::Status Restore(std::shared_ptr<const runtime::NamedTensors> global,
                       uint64_t next_round, std::vector<RoundReport> history,
                       bool ended);

  // --- The open round's bookkeeping.

  // An update was refused (counted in the open round's report, or the next
  // one's when none is open).
  void CountRejected() { ++pending_.rejected; }
  // An update is claimed (its add runs outside the lock) or its add ended.
  void BeginAdd() { ++adds_in_flight_; }
  void EndAdd() { --adds_in_flight_; }
  bool AddsDone() const { return adds_in_flight_ == 0; }
  // Board `id` began pushing; when its upload began (cleared as a round
  // opens), moved to `id` when it joins again.
  void StartUpload(const std::string& id) { upload_start_[id] = clock_.Now(); }
  std::optional<absl::Time> UploadStart(const std::string& id) const;
  void MoveUpload(const std::string& old_id, const std::string& id, bool keep);
  void ClearUploads() { upload_start_.clear(); }
  // An accepted update's figures into the open round's report.
  void NoteUpdate(ClientRoundReport client);
  // A round's figures evaluated after it closed (overlapped evaluation).
  void RecordEvaluation(const RoundReport& report) {
    history_.AddEvaluation(report);
  }
  // What the closing round's report says of its timing.
  absl::Time last_update() const { return last_update_; }

  // --- The driver's signal.

  // Something the driver acts on changed (RunOnce runs).
  void WorkChanged() {
    work_pending_ = true;
    changed_.SignalAll();
  }
  // Whether work was pending; it is not any more.
  bool TakeWork() {
    const bool pending = work_pending_;
    work_pending_ = false;
    return pending;
  }
  // Waits (real time) up to `timeout` unless work is pending.
  void WaitForWork(absl::Duration timeout) {
    if (!work_pending_) changed_.WaitWithTimeout(&mu, timeout);
  }

 private:
  // FailedPrecondition for `what` from any phase but `allowed`.
  absl::Status Expect(const char* what,
                      std::initializer_list<RoundPhase> allowed) const;

  Clock& clock_;
  absl::CondVar changed_;
  RoundPhase phase_ = RoundPhase::kWaiting;
  uint64_t round_ = 1;
  int attempt_ = 0;
  v1::TrainConfig train_;
  uint32_t total_rounds_ = 0;
  std::shared_ptr<const runtime::NamedTensors> global_;
  ClientRegistry clients_;
  std::unique_ptr<RoundAggregator> aggregate_;
  RoundReport pending_;
  int adds_in_flight_ = 0;
  absl::Time round_start_;
  std::map<std::string, absl::Time> upload_start_;
  absl::Time last_update_;
  JobHistory history_;
  bool work_pending_ = true;
  bool shutdown_ = false;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_JOB_STATE_H_
