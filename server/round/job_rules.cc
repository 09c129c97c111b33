#include "server/round/job_rules.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/round/async_rounds.h"
#include "server/round/sync_rounds.h"
#include "server/strategy/keep_frozen.h"

namespace fedberry::server {
namespace {

// `status` as InvalidArgument naming `what`.
absl::Status Refused(absl::string_view what, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", status.message()));
}

std::unique_ptr<RoundSource> MakeRoundSource(
    const CoordinatorOptions& options) {
  if (options.upstream) {
    return std::make_unique<UpstreamRounds>(options.upstream_sink);
  }
  return std::make_unique<OwnRounds>(options.rounds, options.train,
                                     options.seed);
}

std::unique_ptr<SyncRounds> MakeSyncRounds(const CoordinatorOptions& options,
                                           const CloseOptions& close,
                                           RoundContext context) {
  std::shared_ptr<const CohortSelection> selection =
      options.selection
          ? options.selection
          : std::make_shared<const SharedCohorts>(
                options.fraction, options.target_updates, options.over_select,
                options.min_clients_per_round);
  return std::make_unique<SyncRounds>(
      context,
      SyncRoundOptions{close, options.liveness, options.min_clients_per_round,
                       options.max_update_ratio},
      std::move(selection));
}

std::unique_ptr<RoundKind> MakeRoundKind(const CoordinatorOptions& options,
                                         const CloseOptions& close,
                                         RoundContext context) {
  if (options.async) {
    return std::make_unique<AsyncRounds>(
        context, AsyncRoundOptions{*options.async, options.seed,
                                   options.liveness, options.upstream});
  }
  std::unique_ptr<SyncRounds> plain = MakeSyncRounds(options, close, context);
  if (!options.secagg) return plain;
  SecAggOptions secagg = *options.secagg;
  secagg.keys_deadline = close.deadline;
  return std::make_unique<SecAggRounds>(context, secagg, std::move(plain));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobRules>> JobRules::Create(
    const CoordinatorOptions& options, const runtime::NamedTensors& initial,
    std::unique_ptr<Strategy> given, JobState& job, LongPolls& polls,
    SampleRelay& relay) {
  auto rules = std::unique_ptr<JobRules>(new JobRules);
  rules->source_ = MakeRoundSource(options);
  rules->upstream_ = dynamic_cast<UpstreamRounds*>(rules->source_.get());
  rules->budget_ = options.budget;
  const int parameters = options.strategy.parameter_count;
  absl::StatusOr<runtime::TrainableSet> trainable = runtime::TrainableSet::Make(
      initial,
      parameters < 0 ? initial.size() : static_cast<size_t>(parameters),
      options.trainable_tensors);
  if (!trainable.ok()) return Refused("--trainable", trainable.status());
  rules->trainable_ = *std::move(trainable);
  std::unique_ptr<Strategy> strategy = std::move(given);
  if (!strategy) {
    absl::StatusOr<std::unique_ptr<Strategy>> made =
        MakeStrategy(options.strategy, initial);
    if (!made.ok()) return Refused("aggregation strategy", made.status());
    strategy = *std::move(made);
  }
  if (rules->budget_) strategy = rules->budget_->Aggregate(std::move(strategy));
  rules->strategy_ = KeepFrozen(std::move(strategy), rules->trainable_);
  rules->close_ =
      CloseOptions{options.quorum, options.round_deadline, options.paused_grace,
                   rules->strategy_->MinUpdates()};
  absl::StatusOr<std::unique_ptr<planner::RoundPlanner>> planner =
      planner::RoundPlanner::Create(options.planning);
  if (!planner.ok()) return Refused("work planner", planner.status());
  rules->planner_ = *std::move(planner);
  rules->kind_ =
      MakeRoundKind(options, rules->close_,
                    RoundContext{job, polls, relay, rules->planner_.get()});
  rules->secagg_ = dynamic_cast<SecAggRounds*>(rules->kind_.get());
  return rules;
}

}  // namespace fedberry::server
