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
  if (opened) parts_.job.ClearUploads();  // of the rounds before
  return opened;
}

bool RoundOpening::TryOpenRound() {
  JobState& job = parts_.job;
  const CoordinatorOptions& options = parts_.options;
  RoundKind& kind = parts_.rules.kind();
  const absl::Time now = job.clock().Now();
  std::optional<RoundSource::Opening> opening =
      parts_.rules.source().Next(job.round(), job.global());
  if (!opening) return false;  // a gateway waiting for its parent's offer
  if (!Must(job.Prepare(*std::move(opening)))) return false;
  std::vector<std::string> available =
      job.clients().Available(now, options.liveness);
  parts_.declared_bound.SetFleet(job.clients().DeclaredPerBoard());
  const int n = static_cast<int>(available.size());
  if (n < std::max(1, options.min_clients_to_start) ||
      n < options.min_clients_per_round) {
    return false;
  }
  // Cohort and task id depend only on (seed, round, attempt): a server that
  // restarts from its checkpoint reopens the round with the same task, so
  // clients that were training it can resume and deliver.
  std::mt19937_64 rng(options.seed * 1000003u + job.round() * 7919u +
                      job.attempt());
  Cohort cohort = kind.Draw(std::move(available), rng);
  if (cohort.too_few) {
    SkipShortCohort(cohort);
    return false;
  }
  std::unique_ptr<RoundAggregator> sum = BeginSum(now);
  if (sum == nullptr) return false;
  sum->Expect(cohort.expected);
  RoundAggregator& collecting = *sum;
  if (RoundBudget* budget = parts_.rules.budget()) {
    v1::TrainConfig shaped = job.train();
    budget->Shape(shaped);
    if (!Must(job.Shape(std::move(shaped)))) return false;
  }
  if (!Must(job.Collect(std::move(sum),
                        job.clients().Declining(now, options.liveness)))) {
    return false;
  }
  kind.Open(cohort, rng, n, collecting);
  return true;
}

bool RoundOpening::Must(const absl::Status& transition) const {
  if (!transition.ok()) spdlog::error("{}", transition.ToString());
  return transition.ok();
}

std::unique_ptr<RoundAggregator> RoundOpening::BeginSum(absl::Time now) {
  absl::StatusOr<std::unique_ptr<RoundAggregator>> sum =
      parts_.rules.strategy().BeginRound(parts_.job.global());
  if (sum.ok()) return *std::move(sum);
  // The round cannot take updates (e.g. no room for the robust rules'
  // store): try again later, saying why now and then.
  if (now - last_begin_error_ >= absl::Seconds(30)) {
    spdlog::error("round {}: cannot open: {}", parts_.job.round(),
                  sum.status().ToString());
    last_begin_error_ = now;
  }
  return nullptr;
}

void RoundOpening::SkipShortCohort(const Cohort& cohort) {
  JobState& job = parts_.job;
  // Poisson sampling drew fewer boards than a round needs: the draw is
  // charged all the same (the budget's accountant assumes every draw), and
  // the next attempt draws again.
  RoundReport skipped;
  skipped.round = job.round();
  skipped.selected = static_cast<int>(cohort.members.size());
  if (RoundBudget* budget = parts_.rules.budget()) budget->Charge(skipped);
  parts_.rules.source().Abandoned(skipped);
  spdlog::warn(
      "round {}: drew {} board(s) (expected {:.1f}), fewer than "
      "--min_clients={}; drawing again",
      job.round(), cohort.members.size(), cohort.expected,
      parts_.options.min_clients_per_round);
  Must(job.SkipAttempt());
}

bool RoundOpening::TryOpenEvaluationOnly() {
  JobState& job = parts_.job;
  const size_t available =
      job.clients()
          .Available(job.clock().Now(), parts_.options.liveness)
          .size();
  if (available <
      static_cast<size_t>(std::max(1, parts_.options.min_clients_to_start))) {
    return false;
  }
  RoundReport report;  // round 0: the model as given
  report.round = 0;
  if (!Must(job.HoldEvaluationOnly(report))) return false;
  parts_.closing.AskBoards(
      {report, RoundResult{job.global(), false}, /*finished=*/true});
  return true;
}

void RoundOpening::Prune() {
  const RoundKind& kind = parts_.rules.kind();
  const int pruned = parts_.job.clients().Prune(
      parts_.job.clock().Now(), parts_.options.liveness,
      [&kind](const std::string& id) { return kind.PartOf(id).held; });
  if (pruned > 0) {
    spdlog::info("forgot {} client(s) that joined but never asked for a task",
                 pruned);
  }
}

}  // namespace fedberry::server
