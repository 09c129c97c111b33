// What happens when a round opens: the source's next round (the job's own,
// or a gateway's parent's offer) is taken, a cohort is drawn from the
// boards that are there (a short draw is charged and drawn again), the
// strategy's sum is begun and the kind opens the round. An evaluate-only
// job opens its one evaluation on the boards instead. Also forgets boards
// that joined but never asked for a task.
// Thread-safety: every method runs under the job's lock (JobState::mu).
#ifndef FEDBERRY_SERVER_ROUND_ROUND_OPENING_H_
#define FEDBERRY_SERVER_ROUND_ROUND_OPENING_H_

#include <memory>

#include "absl/time/time.h"
#include "server/declared_size_bound.h"
#include "server/round/cohort_selection.h"
#include "server/round/coordinator_options.h"
#include "server/round/job_rules.h"
#include "server/round/job_state.h"
#include "server/round/round_closing.h"
#include "server/round/round_kind.h"
#include "server/round/round_source.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// What an opening round goes through: the coordinator's options (a value),
// and its job, rules, fleet size bound and closing, which outlive it.
struct OpeningParts {
  CoordinatorOptions options;
  JobState& job;
  JobRules& rules;
  DeclaredSizeBound& declared_bound;  // under job.mu
  RoundClosing& closing;              // holds an evaluate-only job's evaluation
};

class RoundOpening {
 public:
  explicit RoundOpening(OpeningParts parts) : parts_(parts) {}

  // Opens the next round (job phase kCollecting), or an evaluate-only
  // job's evaluation (kEvaluating), once enough boards are there; true
  // when it did.
  bool TryOpen() ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // Forgets boards that joined more than options.liveness ago and never
  // asked for a task (not those the open round counts on).
  void Prune() ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);

 private:
  bool TryOpenRound() ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  bool TryOpenEvaluationOnly() ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // The strategy's sum for the round (null when it cannot take updates
  // now, said now and then).
  std::unique_ptr<RoundAggregator> BeginSum(absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);
  // A transition the opening must be allowed, logged when it is not (a
  // defect of the round core); whether it was.
  bool Must(const absl::Status& transition) const;
  // A drawn cohort too small to run: charged, and drawn again.
  void SkipShortCohort(const Cohort& cohort)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(parts_.job.mu);

  const OpeningParts parts_;
  absl::Time last_begin_error_ ABSL_GUARDED_BY(parts_.job.mu) =
      absl::InfinitePast();
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_OPENING_H_
