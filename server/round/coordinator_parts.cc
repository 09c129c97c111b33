#include "server/round/coordinator_parts.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "server/round/async_rounds.h"
#include "server/round/sync_rounds.h"
#include "server/strategy/keep_frozen.h"

namespace fedberry::server {

std::unique_ptr<RoundSource> MakeRoundSource(
    const CoordinatorOptions& options) {
  if (options.upstream) {
    return std::make_unique<UpstreamRounds>(options.upstream_sink);
  }
  return std::make_unique<OwnRounds>(options.rounds, options.train,
                                     options.seed);
}

runtime::TrainableSet MakeTrainableSet(const CoordinatorOptions& options,
                                       const runtime::NamedTensors& initial) {
  const int parameters = options.strategy.parameter_count;
  absl::StatusOr<runtime::TrainableSet> made = runtime::TrainableSet::Make(
      initial,
      parameters < 0 ? initial.size() : static_cast<size_t>(parameters),
      options.trainable_tensors);
  if (!made.ok()) {
    spdlog::error("--trainable: {}; every parameter trains",
                  made.status().ToString());
    return runtime::TrainableSet();
  }
  return *std::move(made);
}

std::unique_ptr<Strategy> MakeJobStrategy(
    const CoordinatorOptions& options, const runtime::NamedTensors& initial,
    std::unique_ptr<Strategy> given, RoundBudget* budget,
    const runtime::TrainableSet& trainable) {
  std::unique_ptr<Strategy> strategy = std::move(given);
  if (!strategy) {
    auto made = MakeStrategy(options.strategy, initial);
    if (!made.ok()) {
      spdlog::error("aggregation strategy: {}; aggregating with fedavg",
                    made.status().ToString());
      made = MakeStrategy(StrategyOptions{}, initial);
    }
    strategy = *std::move(made);
  }
  if (budget != nullptr) strategy = budget->Aggregate(std::move(strategy));
  return KeepFrozen(std::move(strategy), trainable);
}

std::unique_ptr<planner::RoundPlanner> MakePlanner(
    const CoordinatorOptions& options) {
  auto planner = planner::RoundPlanner::Create(options.planning);
  if (planner.ok()) return *std::move(planner);
  spdlog::error("work planner: {}; every client trains the job's config",
                planner.status().ToString());
  return nullptr;
}

std::unique_ptr<RoundKind> MakeRoundKind(
    const CoordinatorOptions& options, const CloseOptions& close,
    std::shared_ptr<const CohortSelection> selection, RoundContext context) {
  if (options.async) {
    return std::make_unique<AsyncRounds>(
        context, AsyncRoundOptions{*options.async, options.seed,
                                   options.liveness, options.upstream});
  }
  return std::make_unique<SyncRounds>(
      context,
      SyncRoundOptions{close, options.liveness, options.min_clients_per_round,
                       options.max_update_ratio},
      std::move(selection));
}

}  // namespace fedberry::server
