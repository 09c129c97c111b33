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
      publisher_(parts.evaluator, std::move(sink),
                 [this](const RoundReport& r) { return RecordEvaluation(r); }) {
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
  const absl::Time now = parts_.clock.Now();
  report.round_seconds = absl::ToDoubleSeconds(now - job.round_start);
  report.elapsed_seconds = job.history.ElapsedSeconds(now);
  if (result.model) {
    job.global = result.model;
    // Only a published result moves the strategy's state.
    parts_.strategy.Commit(*closing.sum);
  }
  closing.sum.reset();
  if (parts_.budget != nullptr) parts_.budget->Charge(report);
  job.history.Add(report);  // its per-board entries: clients.jsonl only
  parts_.kind.Clear();
  ++job.round;
  job.attempt = 0;
  // A gateway's job ends when its parent's does (Shutdown).
  const bool finished =
      job.shutdown || parts_.source.EndsBefore(job.round) || BudgetSpent();
  held = result.model && !job.shutdown &&
         EvaluatesOnBoards(parts_.options.board_eval, report.round, finished);
  if (held) {
    HoldForBoards({report, result, finished});
  } else if (!finished) {
    // The end of the job is announced only once the last round is
    // durable: clients that hear "done" exit, and a server that crashed
    // before its checkpoint would redo the round without them.
    job.phase = RoundPhase::kWaiting;
  }
  return finished;
}

void RoundClosing::Publish(const RoundReport& report,
                           const FederationSnapshot& snapshot,
                           const RoundResult& result, bool finished) {
  publisher_.Publish(report, snapshot, result, finished);
  parts_.source.Closed(report, result.model);
  if (finished) {
    absl::MutexLock lock(&parts_.job.mu);
    parts_.job.phase = RoundPhase::kDone;
    parts_.polls.WakeAll();
    parts_.job.WorkChanged();
  }
}

void RoundClosing::HoldForBoards(HeldEvaluation::Held held) {
  JobState& job = parts_.job;
  const absl::Time now = parts_.clock.Now();
  std::set<std::string> asked;
  for (const std::string& id :
       job.clients.Available(now, parts_.options.liveness)) {
    // A site gateway holds no data of its own to evaluate on.
    if (job.clients.At(id).boards == 0) asked.insert(id);
  }
  job.phase = RoundPhase::kEvaluating;
  for (const std::string& id :
       evaluation_.Open(std::move(held), job.global, std::move(asked), now)) {
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
        evaluation_.Finish(parts_.clock.Now());
    if (!finished) return;
    held = *std::move(finished);
    job.history.AddBoardEvaluation(held.report);
    snapshot = Snapshot();
    // The last round's end is announced once it is published (as Close
    // does): kClosing until then.
    job.phase = job.shutdown    ? RoundPhase::kDone
                : held.finished ? RoundPhase::kClosing
                                : RoundPhase::kWaiting;
    job.WorkChanged();
  }
  Publish(held.report, snapshot, held.result, held.finished);
}

RoundClosing::ClosingRound RoundClosing::TakeClosingRound() {
  JobState& job = parts_.job;
  // Updates being added are part of the round: wait for them (their adds
  // take milliseconds; no new one starts once the round is closing).
  absl::MutexLock lock(
      &job.mu, absl::Condition(
                   +[](int* adds) { return *adds == 0; }, &job.adds_in_flight));
  ClosingRound closing;
  closing.sum = std::move(job.aggregate);
  RoundReport& report = closing.report;
  report = std::move(job.pending);
  job.pending = RoundReport{};
  parts_.kind.Close(report);
  report.round_seconds =
      absl::ToDoubleSeconds(parts_.clock.Now() - job.round_start);
  report.makespan_seconds =
      absl::ToDoubleSeconds(job.last_update - job.round_start);
  // No round follows the last one to overlap with, and the end of the
  // job is announced only once it is evaluated and durable.
  // A round evaluated on the boards reports once they answered: its
  // server-side evaluation has no next round to overlap with either.
  const CoordinatorOptions& options = parts_.options;
  closing.overlap = options.overlap_evaluation && parts_.evaluator &&
                    !job.shutdown && parts_.source.MayOverlap(job.round) &&
                    !EvaluatesOnBoards(options.board_eval, job.round, false);
  return closing;
}

void RoundClosing::Abandon(RoundReport report, const char* why) {
  spdlog::warn(
      "round {}: given up with {} of {} updates ({}; quorum {}, strategy "
      "minimum {}); the round starts over with the same global model",
      report.round, report.participants, report.selected, why,
      QuorumOf(parts_.close, report.selected), parts_.close.min_updates);
  FederationSnapshot snapshot;
  {
    JobState& job = parts_.job;
    absl::MutexLock lock(&job.mu);
    job.phase = job.shutdown ? RoundPhase::kDone : RoundPhase::kWaiting;
    ++job.attempt;
    parts_.kind.Clear();
    job.WorkChanged();
    parts_.source.Abandoned(report);
    if (parts_.budget == nullptr) return;
    // The attempt is charged; the charge is durable before the next one.
    parts_.budget->Charge(report);
    snapshot = Snapshot();
  }
  Persist(snapshot);
}

bool RoundClosing::BudgetSpent() const {
  if (parts_.budget == nullptr) return false;
  const std::string why = parts_.budget->EndsBefore();
  if (!why.empty()) {
    spdlog::info("the job ends before round {}: {}", parts_.job.round, why);
  }
  return !why.empty();
}

FederationSnapshot RoundClosing::Snapshot() const {
  const JobState& job = parts_.job;
  FederationSnapshot snapshot;
  snapshot.next_round = job.round;
  snapshot.global = job.global;
  snapshot.history = job.history.reports();
  if (parts_.planner != nullptr) {
    snapshot.capacities = parts_.planner->estimator().histories();
  }
  snapshot.strategy_state = parts_.strategy.State();
  if (parts_.budget != nullptr) snapshot.budget_state = parts_.budget->State();
  snapshot.async = parts_.kind.State();
  snapshot.sequence = ++snapshot_sequence_;
  snapshot.clients = job.clients.Snapshot();
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
  if (absl::Status s = CheckUpdateLayout(*job.global, *snapshot.global);
      !s.ok()) {
    return misfit(s, "global model does not fit this job's model");
  }
  if (absl::Status s = parts_.strategy.Restore(snapshot.strategy_state);
      !s.ok()) {
    return misfit(s, "strategy state does not fit this job");
  }
  if (absl::Status s = parts_.budget != nullptr
                           ? parts_.budget->Restore(snapshot.budget_state)
                           : absl::OkStatus();
      !s.ok()) {
    return misfit(s, "privacy budget does not fit this job");
  }
  parts_.kind.Restore(snapshot.async);
  job.global = snapshot.global;
  job.round = snapshot.next_round;
  job.history.Restore(snapshot.history);
  if (parts_.planner != nullptr) {
    parts_.planner->estimator().Restore(snapshot.capacities);
  }
  job.clients.RestoreFrom(snapshot.clients, parts_.clock.Now(), admit);
  job.phase = parts_.source.EndsBefore(job.round) || BudgetSpent()
                  ? RoundPhase::kDone
                  : RoundPhase::kWaiting;
  job.work_pending = true;
  return absl::OkStatus();
}

FederationSnapshot RoundClosing::RecordEvaluation(const RoundReport& report) {
  absl::MutexLock lock(&parts_.job.mu);
  parts_.job.history.AddEvaluation(report);
  return Snapshot();
}

}  // namespace fedberry::server
