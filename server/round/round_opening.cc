#include "server/round/round_opening.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fedberry::server {

bool RoundOpening::TryOpen() {
  Prune();
  const bool opened =
      parts_.options.evaluate_only ? TryOpenEvaluationOnly() : TryOpenRound();
  if (opened) parts_.job.upload_start.clear();  // of the rounds before
  return opened;
}

bool RoundOpening::TryOpenRound() {
  JobState& job = parts_.job;
  const CoordinatorOptions& options = parts_.options;
  const absl::Time now = parts_.clock.Now();
  std::optional<RoundSource::Opening> opening =
      parts_.source.Next(job.round, job.global);
  if (!opening) return false;  // a gateway waiting for its parent's offer
  // A new round, or a new model for it, starts its attempts afresh.
  if (job.round != opening->round || job.global != opening->global) {
    job.attempt = 0;
  }
  job.round = opening->round;
  job.global = std::move(opening->global);
  job.train = std::move(opening->train);
  job.total_rounds = opening->total_rounds;
  std::vector<std::string> available =
      job.clients.Available(now, options.liveness);
  parts_.declared_bound.SetFleet(job.clients.DeclaredPerBoard());
  const int n = static_cast<int>(available.size());
  if (n < std::max(1, options.min_clients_to_start) ||
      n < options.min_clients_per_round) {
    return false;
  }
  // Cohort and task id depend only on (seed, round, attempt): a server that
  // restarts from its checkpoint reopens the round with the same task, so
  // clients that were training it can resume and deliver.
  std::mt19937_64 rng(options.seed * 1000003u + job.round * 7919u +
                      job.attempt);
  Cohort cohort = parts_.kind.Draw(std::move(available), rng);
  if (parts_.kind.TooFew(cohort)) {
    SkipShortCohort(cohort);
    return false;
  }
  std::unique_ptr<RoundAggregator> sum = BeginSum(now);
  if (sum == nullptr) return false;
  sum->Expect(cohort.expected);
  if (parts_.budget != nullptr) parts_.budget->Shape(job.train);
  BeginCollecting(std::move(sum), now);
  parts_.kind.Open(cohort, rng, n, *job.aggregate);
  job.changed.SignalAll();
  return true;
}

std::unique_ptr<RoundAggregator> RoundOpening::BeginSum(absl::Time now) {
  absl::StatusOr<std::unique_ptr<RoundAggregator>> sum =
      parts_.strategy.BeginRound(parts_.job.global);
  if (sum.ok()) return *std::move(sum);
  // The round cannot take updates (e.g. no room for the robust rules'
  // store): try again later, saying why now and then.
  if (now - last_begin_error_ >= absl::Seconds(30)) {
    spdlog::error("round {}: cannot open: {}", parts_.job.round,
                  sum.status().ToString());
    last_begin_error_ = now;
  }
  return nullptr;
}

void RoundOpening::BeginCollecting(std::unique_ptr<RoundAggregator> sum,
                                   absl::Time now) {
  JobState& job = parts_.job;
  job.aggregate = std::move(sum);
  // Pushes refused while no round collected (a full buffer publishing, or
  // between rounds) count in the next one's report.
  const int rejected_between = job.pending.rejected;
  job.pending = RoundReport{};
  job.pending.rejected = rejected_between;
  job.pending.round = job.round;
  job.pending.declined = job.clients.Declining(now, parts_.options.liveness);
  job.round_start = now;
  job.history.Start(now);
  job.last_update = now;
  job.phase = RoundPhase::kCollecting;
}

void RoundOpening::SkipShortCohort(const Cohort& cohort) {
  JobState& job = parts_.job;
  // Poisson sampling drew fewer boards than a round needs: the draw is
  // charged all the same (the budget's accountant assumes every draw), and
  // the next attempt draws again.
  RoundReport skipped;
  skipped.round = job.round;
  skipped.selected = static_cast<int>(cohort.members.size());
  if (parts_.budget != nullptr) parts_.budget->Charge(skipped);
  parts_.source.Abandoned(skipped);
  spdlog::warn(
      "round {}: drew {} board(s) (expected {:.1f}), fewer than "
      "--min_clients={}; drawing again",
      job.round, cohort.members.size(), cohort.expected,
      parts_.options.min_clients_per_round);
  ++job.attempt;
  job.work_pending = true;
}

bool RoundOpening::TryOpenEvaluationOnly() {
  JobState& job = parts_.job;
  const size_t available =
      job.clients.Available(parts_.clock.Now(), parts_.options.liveness).size();
  if (available <
      static_cast<size_t>(std::max(1, parts_.options.min_clients_to_start))) {
    return false;
  }
  RoundReport report;  // round 0: the model as given
  report.round = 0;
  job.history.Add(report);
  parts_.closing.HoldForBoards(
      {report, RoundResult{job.global, false}, /*finished=*/true});
  return true;
}

void RoundOpening::Prune() {
  const int pruned = parts_.job.clients.Prune(
      parts_.clock.Now(), parts_.options.liveness, parts_.kind.Members());
  if (pruned > 0) {
    spdlog::info("forgot {} client(s) that joined but never asked for a task",
                 pruned);
  }
}

}  // namespace fedberry::server
