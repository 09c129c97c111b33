// What happens when a round ends: the open round is taken once its adds in
// flight are in, aggregated, checked and committed (or given up, to start
// over), charged to the budget, kept in the history, made durable and
// reported, through the RoundPublisher. A round evaluated on the boards is
// held (HeldEvaluation) until they answered. Also the job's snapshots.
// The coordinator decides when (the close rule, via its RoundKind) and this
// does the closing, on the driver's thread.
// Thread-safety: methods marked as such run under the job's lock; the rest
// take it themselves and are called from the driver only.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_CLOSING_H_
#define FEDBERRY_SERVER_ROUND_ROUND_CLOSING_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "base/clock.h"
#include "server/long_polls.h"
#include "server/planner/round_planner.h"
#include "server/round/close_rule.h"
#include "server/round/coordinator_options.h"
#include "server/round/held_evaluation.h"
#include "server/round/job_rules.h"
#include "server/round/job_state.h"
#include "server/round/round_kind.h"
#include "server/round/round_publisher.h"
#include "server/round/round_source.h"
#include "server/round/round_types.h"
#include "server/sample_relay.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// What a closing round goes through: the coordinator's options and
// evaluator (values), and its job, rules, long polls and relay, which
// outlive it.
struct ClosingParts {
  CoordinatorOptions options;
  Evaluator evaluator;
  JobState& job;
  JobRules& rules;
  LongPolls& polls;
  SampleRelay& relay;
};

class RoundClosing {
 public:
  // `sink` (may be empty) hears each closed round.
  RoundClosing(ClosingParts parts, ReportSink sink);

  void SetSnapshotSink(SnapshotSink sink) {
    publisher_.SetSnapshotSink(std::move(sink));
  }

  // Closes the open round (job phase kClosing); `abandon`: gives it up
  // instead, saying why. Waits first for the previous round's report.
  void Close(const char* abandon);

  // Holds `held` and asks the boards that are there to evaluate its model
  // (job.global()); the job must be in kEvaluating already.
  void AskBoards(HeldEvaluation::Held held)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // The boards' evaluation is over: its figures join the held round, which
  // publishes. Nothing when none is held.
  void FinishBoardEvaluation();
  // Waits until the last closed round has reported (a held one, an
  // overlapped evaluation).
  void FinishPending();

  // The open evaluation on the boards (tasks, pulls, answers).
  HeldEvaluation& evaluation() ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu) {
    return evaluation_;
  }
  // What the server persists now (see FederationSnapshot).
  FederationSnapshot Snapshot() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // Snapshot's inverse: the job resumes from `snapshot` (JobState::Restore:
  // kWaiting, or kDone when it had ended). Boards `admit` refuses are not
  // restored: they join again. InvalidArgument for a snapshot whose model,
  // strategy state or budget does not fit this job (the job is then not to
  // run).
  absl::Status Restore(
      const FederationSnapshot& snapshot,
      const std::function<bool(const RegisteredClient&)>& admit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // Persists `snapshot` (in order; see RoundPublisher::Persist).
  void Persist(const FederationSnapshot& snapshot) {
    publisher_.Persist(snapshot);
  }
  // Whether the budget ends the job before `round` (saying why).
  bool BudgetSpent(uint64_t round) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);

 private:
  // The open round as it closes: its sum (once the adds in flight are in),
  // its report so far, and whether its evaluation overlaps the next round.
  struct ClosingRound {
    std::unique_ptr<RoundAggregator> sum;
    RoundReport report;
    bool overlap = false;
  };
  // A transition the closing must be allowed (a failure is a defect of the
  // round core): logged, never thrown.
  void Must(const absl::Status& transition) const;
  ClosingRound TakeClosingRound();
  // The next global model (when `result` has one) committed, the round
  // charged and kept, the next round's number; returns whether the job
  // ends after it, and sets `held` when its report waits for the boards.
  bool CommitLocked(ClosingRound& closing, const RoundResult& result,
                    bool& held) ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // Gives the round up: it starts over with the same model; a budget is
  // charged for it, durably.
  void Abandon(RoundReport report, const char* why);
  // Persists, reports and hands a closed round to its source; ends the job
  // after the `finished` one.
  void Publish(const RoundReport& report, const FederationSnapshot& snapshot,
               const RoundResult& result, bool finished);
  // An overlapped evaluation's figures into the history; the snapshot to
  // persist with them.
  FederationSnapshot RecordEvaluation(const RoundReport& report);

  const ClosingParts parts_;
  HeldEvaluation evaluation_ ABSL_GUARDED_BY(parts_.job.mu);
  // FederationSnapshot::sequence of the last snapshot taken.
  mutable uint64_t snapshot_sequence_ ABSL_GUARDED_BY(parts_.job.mu) = 0;
  RoundPublisher publisher_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_CLOSING_H_
