// The rules a job runs by, made once from the coordinator's options and
// owned here: where its rounds come from (RoundSource: its own, or a site
// gateway's parent's), what kind they are (RoundKind), what trains
// (TrainableSet), how updates aggregate (the Strategy inside the budget's
// and frozen tensors' wrappers), what the job spends (RoundBudget) and how
// work is planned (RoundPlanner). Parts of the round core take this one
// owner instead of a bundle of references to its pieces.
// Thread-safety: the pieces are guarded as RoundCoordinator says (the
// kind, budget and planner under JobState::mu; the strategy the driver's or
// under mu).
#ifndef FEDBERRY_SERVER_ROUND_JOB_RULES_H_
#define FEDBERRY_SERVER_ROUND_JOB_RULES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/model.h"
#include "runtime/trainable_set.h"
#include "server/long_polls.h"
#include "server/planner/round_planner.h"
#include "server/round/close_rule.h"
#include "server/round/coordinator_options.h"
#include "server/round/job_state.h"
#include "server/round/round_kind.h"
#include "server/round/round_source.h"
#include "server/round/secagg_rounds.h"
#include "server/sample_relay.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

class JobRules {
 public:
  // The rules `options` ask for, for a job of `initial` (its trainable
  // set, a strategy that aggregates it): `given`, else the one
  // options.strategy names. The kind works on `job`, `polls` and `relay`,
  // which must outlive the rules. InvalidArgument naming the option that
  // cannot be met (a --trainable regex that matches nothing, a strategy or
  // planner that cannot be made); the server checks options before a job
  // starts, so this refuses only what slipped past.
  static absl::StatusOr<std::unique_ptr<JobRules>> Create(
      const CoordinatorOptions& options, const runtime::NamedTensors& initial,
      std::unique_ptr<Strategy> given, JobState& job, LongPolls& polls,
      SampleRelay& relay);

  RoundSource& source() { return *source_; }
  // The same source when it is a gateway's parent's, else null.
  UpstreamRounds* upstream() { return upstream_; }
  RoundKind& kind() { return *kind_; }
  // The same kind when rounds are securely aggregated, else null.
  SecAggRounds* secagg() { return secagg_; }
  Strategy& strategy() { return *strategy_; }
  RoundBudget* budget() const { return budget_.get(); }  // may be null
  planner::RoundPlanner* planner() const {
    return planner_.get();
  }  // may be null
  const runtime::TrainableSet& trainable() const { return trainable_; }
  // When a round closes: the options' rule, with the strategy's minimum.
  const CloseOptions& close() const { return close_; }

 private:
  JobRules() = default;

  std::unique_ptr<RoundSource> source_;
  UpstreamRounds* upstream_ = nullptr;
  std::shared_ptr<RoundBudget> budget_;
  runtime::TrainableSet trainable_;
  std::unique_ptr<Strategy> strategy_;
  CloseOptions close_;
  std::unique_ptr<planner::RoundPlanner> planner_;
  std::unique_ptr<RoundKind> kind_;
  SecAggRounds* secagg_ = nullptr;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_JOB_RULES_H_
