// The parts a RoundCoordinator is made of, made from its options: where its
// rounds come from and what kind they are, what it trains, how it
// aggregates and how it plans.
// A part that cannot be made as asked falls back to the plain one, saying
// why (the server's checks refuse such options before a job starts).
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_ROUND_COORDINATOR_PARTS_H_
#define FEDBERRY_SERVER_ROUND_COORDINATOR_PARTS_H_

#include <memory>

#include "runtime/model.h"
#include "runtime/trainable_set.h"
#include "server/planner/round_planner.h"
#include "server/round/close_rule.h"
#include "server/round/cohort_selection.h"
#include "server/round/coordinator_options.h"
#include "server/round/round_kind.h"
#include "server/round/round_source.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// The job's own rounds, or (options.upstream) a gateway's parent's.
std::unique_ptr<RoundSource> MakeRoundSource(const CoordinatorOptions& options);

// What the job trains of `initial` (options.trainable_tensors); every
// parameter when the names do not fit it.
runtime::TrainableSet MakeTrainableSet(const CoordinatorOptions& options,
                                       const runtime::NamedTensors& initial);

// The job's aggregation: `given`, else the one options.strategy names (else
// FedAvg), inside the budget's (may be null) and keeping `trainable`'s
// frozen tensors exact.
std::unique_ptr<Strategy> MakeJobStrategy(
    const CoordinatorOptions& options, const runtime::NamedTensors& initial,
    std::unique_ptr<Strategy> given, RoundBudget* budget,
    const runtime::TrainableSet& trainable);

// The work planner options.planning asks for; null (every board trains the
// job's config) when it cannot be made.
std::unique_ptr<planner::RoundPlanner> MakePlanner(
    const CoordinatorOptions& options);

// The kind of round the job runs: buffered versions (options.async), else
// synchronous rounds over cohorts drawn by `selection`, closing by `close`.
std::unique_ptr<RoundKind> MakeRoundKind(
    const CoordinatorOptions& options, const CloseOptions& close,
    std::shared_ptr<const CohortSelection> selection, RoundContext context);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_COORDINATOR_PARTS_H_
