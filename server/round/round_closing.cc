#include "server/round/round_closing.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/round/board_evaluation.h"
#include "server/strategy/update_layout.h"

namespace fedberry::server {

RoundClosing::RoundClosing(ClosingParts parts, ReportSink sink)
    : parts_(parts),
      evaluation_(parts.options.board_eval, parts.options.seed),
      publisher_(parts_.evaluator, std::move(sink),
                 [this](const RoundReport& r) { return RecordEvaluation(r); }) {
}

void RoundClosing::Must(const absl::Status& transition) const {
  if (!transition.ok()) spdlog::error("{}", transition.ToString());
}

void RoundClosing::FinishPending() {
  FinishBoardEvaluation();  // a job stopped while its boards evaluated
  publisher_.FinishPending();
}

void RoundClosing::Close(const char* abandon) {
  // The previous round reports before this one.
  FinishPending();
  parts_.relay.Close();  // moved samples serve their round only
  ClosingRound closing = TakeClosingRound();
  if (abandon != nullptr) {
    Abandon(closing.report, abandon);
    return;
  }
  const RoundResult result = MakeRoundResult(*closing.sum, parts_.evaluator,
                                             closing.overlap, closing.report);
  FederationSnapshot snapshot;
  bool finished = false;
  bool held = false;
  {
    absl::MutexLock lock(&parts_.job.mu);
    finished = CommitLocked(closing, result, held);
    snapshot = Snapshot();
    parts_.job.WorkChanged();
  }
  if (held) {
    Persist(snapshot);  // the model is durable; its report waits
    return;
  }
  Publish(closing.report, snapshot, result, finished);
}

bool RoundClosing::CommitLocked(ClosingRound& closing,
                                const RoundResult& result, bool& held) {
  JobState& job = parts_.job;
  RoundReport& report = closing.report;
  const absl::Time now = job.clock().Now();
  report.round_seconds = absl::ToDoubleSeconds(now - job.round_start());
  report.elapsed_seconds = job.history().ElapsedSeconds(now);
  // Only a published result moves the strategy's state.
  if (result.model) parts_.rules.strategy().Commit(*closing.sum);
  closing.sum.reset();
  if (RoundBudget* budget = parts_.rules.budget()) budget->Charge(report);
  Must(job.Commit(result.model, report));
  // A gateway's job ends when its parent's does (Shutdown).
  const bool finished = job.stopping() ||
                        parts_.rules.source().EndsBefore(job.round()) ||
                        BudgetSpent(job.round());
  held = result.model && !job.stopping() &&
         EvaluatesOnBoards(parts_.options.board_eval, report.round, finished);
  if (held) {
    Must(job.HoldForBoards());
    AskBoards({report, result, finished});
  } else if (!finished) {
    // The end of the job is announced only once the last round is
    // durable: clients that hear "done" exit, and a server that crashed
    // before its checkpoint would redo the round without them.
    Must(job.Reopen());
  }
  return finished;
}

void RoundClosing::Publish(const RoundReport& report,
                           const FederationSnapshot& snapshot,
                           const RoundResult& result, bool finished) {
  publisher_.Publish(report, snapshot, result, finished);
  parts_.rules.source().Closed(report, result.model);
  if (finished) {
    absl::MutexLock lock(&parts_.job.mu);
    Must(parts_.job.Finish());
    parts_.polls.WakeAll();
    parts_.job.WorkChanged();
  }
}

void RoundClosing::AskBoards(HeldEvaluation::Held held) {
  JobState& job = parts_.job;
  const absl::Time now = job.clock().Now();
  std::set<std::string> asked;
  for (const std::string& id :
       job.clients().Available(now, parts_.options.liveness)) {
    // A site gateway holds no data of its own to evaluate on.
    if (job.clients().At(id).boards == 0) asked.insert(id);
  }
  for (const std::string& id :
       evaluation_.Open(std::move(held), job.global(), std::move(asked), now)) {
    parts_.polls.Wake(id);
  }
}

void RoundClosing::FinishBoardEvaluation() {
  HeldEvaluation::Held held;
  FederationSnapshot snapshot;
  {
    JobState& job = parts_.job;
    absl::MutexLock lock(&job.mu);
    std::optional<HeldEvaluation::Held> finished =
        evaluation_.Finish(job.clock().Now());
    if (!finished) return;
    held = *std::move(finished);
    Must(job.EndBoardEvaluation(held.report, held.finished));
    snapshot = Snapshot();
    job.WorkChanged();
  }
  Publish(held.report, snapshot, held.result, held.finished);
}

RoundClosing::ClosingRound RoundClosing::TakeClosingRound() {
  JobState& job = parts_.job;
  // Updates being added are part of the round: wait for them (their adds
  // take milliseconds; no new one starts once the round is closing).
  absl::MutexLock lock(&job.mu, absl::Condition(&job, &JobState::AddsDone));
  ClosingRound closing;
  absl::StatusOr<JobState::Closing> taken = job.TakeClosing();
  Must(taken.status());
  if (taken.ok()) {
    closing.sum = std::move(taken->sum);
    closing.report = std::move(taken->report);
  }
  RoundReport& report = closing.report;
  parts_.rules.kind().Close(report);
  report.round_seconds =
      absl::ToDoubleSeconds(job.clock().Now() - job.round_start());
  report.makespan_seconds =
      absl::ToDoubleSeconds(job.last_update() - job.round_start());
  // No round follows the last one to overlap with, and the end of the
  // job is announced only once it is evaluated and durable.
  // A round evaluated on the boards reports once they answered: its
  // server-side evaluation has no next round to overlap with either.
  const CoordinatorOptions& options = parts_.options;
  closing.overlap = options.overlap_evaluation && parts_.evaluator &&
                    !job.stopping() &&
                    parts_.rules.source().MayOverlap(job.round()) &&
                    !EvaluatesOnBoards(options.board_eval, job.round(), false);
  return closing;
}

void RoundClosing::Abandon(RoundReport report, const char* why) {
  spdlog::warn(
      "round {}: given up with {} of {} updates ({}; quorum {}, strategy "
      "minimum {}); the round starts over with the same global model",
      report.round, report.participants, report.selected, why,
      QuorumOf(parts_.rules.close(), report.selected),
      parts_.rules.close().min_updates);
  FederationSnapshot snapshot;
  {
    JobState& job = parts_.job;
    absl::MutexLock lock(&job.mu);
    Must(job.Abandon());
    job.WorkChanged();
    parts_.rules.source().Abandoned(report);
    RoundBudget* budget = parts_.rules.budget();
    if (budget == nullptr) return;
    // The attempt is charged; the charge is durable before the next one.
    budget->Charge(report);
    snapshot = Snapshot();
  }
  Persist(snapshot);
}

bool RoundClosing::BudgetSpent(uint64_t round) const {
  const RoundBudget* budget = parts_.rules.budget();
  if (budget == nullptr) return false;
  const std::string why = budget->EndsBefore();
  if (!why.empty()) {
    spdlog::info("the job ends before round {}: {}", round, why);
  }
  return !why.empty();
}

FederationSnapshot RoundClosing::Snapshot() const {
  const JobState& job = parts_.job;
  FederationSnapshot snapshot;
  snapshot.next_round = job.round();
  snapshot.global = job.global();
  snapshot.history = job.history().reports();
  if (planner::RoundPlanner* planner = parts_.rules.planner()) {
    snapshot.capacities = planner->estimator().histories();
  }
  snapshot.strategy_state = parts_.rules.strategy().State();
  if (const RoundBudget* budget = parts_.rules.budget()) {
    snapshot.budget_state = budget->State();
  }
  snapshot.async = parts_.rules.kind().State();
  snapshot.sequence = ++snapshot_sequence_;
  snapshot.clients = job.clients().Snapshot();
  return snapshot;
}

absl::Status RoundClosing::Restore(
    const FederationSnapshot& snapshot,
    const std::function<bool(const RegisteredClient&)>& admit) {
  if (!snapshot.global) {
    return absl::InvalidArgumentError("federation snapshot has no model");
  }
  // A part of the checkpoint that does not fit this job, saying which.
  const auto misfit = [](const absl::Status& s, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("the checkpointed ", what, ": ", s.message()));
  };
  JobState& job = parts_.job;
  if (absl::Status s = CheckUpdateLayout(*job.global(), *snapshot.global);
      !s.ok()) {
    return misfit(s, "global model does not fit this job's model");
  }
  if (absl::Status s = parts_.rules.strategy().Restore(snapshot.strategy_state);
      !s.ok()) {
    return misfit(s, "strategy state does not fit this job");
  }
  RoundBudget* budget = parts_.rules.budget();
  if (absl::Status s = budget != nullptr
                           ? budget->Restore(snapshot.budget_state)
                           : absl::OkStatus();
      !s.ok()) {
    return misfit(s, "privacy budget does not fit this job");
  }
  parts_.rules.kind().Restore(snapshot.async);
  if (planner::RoundPlanner* planner = parts_.rules.planner()) {
    planner->estimator().Restore(snapshot.capacities);
  }
  job.clients().RestoreFrom(snapshot.clients, job.clock().Now(), admit);
  // Whether the job had ended is known once its budget is restored.
  const bool ended = parts_.rules.source().EndsBefore(snapshot.next_round) ||
                     BudgetSpent(snapshot.next_round);
  return job.Restore(snapshot.global, snapshot.next_round, snapshot.history,
                     ended);
}

FederationSnapshot RoundClosing::RecordEvaluation(const RoundReport& report) {
  absl::MutexLock lock(&parts_.job.mu);
  parts_.job.RecordEvaluation(report);
  return Snapshot();
}

}  // namespace fedberry::server
