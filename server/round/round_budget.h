// What a job spends round by round and must not overspend: differential
// privacy's budget (server/privacy/). It decides how the job's strategy
// aggregates, adds what boards must do to each round's config, is charged
// for every round attempt that drew a cohort, may end the job before a
// round, and travels in the federation checkpoint, so a restarted server
// goes on from what was spent. The coordinator calls it at those points
// and knows nothing else of it.
// Thread-safety: called by the coordinator under its lock or on its driver
// thread, one call at a time.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_BUDGET_H_
#define FEDBERRY_SERVER_ROUND_ROUND_BUDGET_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "fedberry/v1/federation.pb.h"
#include "server/round/round_types.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

class RoundBudget {
 public:
  virtual ~RoundBudget() = default;
  // The job's strategy as it aggregates under the budget.
  virtual std::unique_ptr<Strategy> Aggregate(
      std::unique_ptr<Strategy> rule) = 0;
  // Why the budget cannot take this joiner in; empty: it may join.
  virtual std::string Refuses(const v1::JoinRequest& join) const { return ""; }
  // Adds to a round's config what its boards must do (e.g. a clip bound).
  virtual void Shape(v1::TrainConfig& train) const = 0;
  // Why the job must end before another round opens; empty: it may go on.
  virtual std::string EndsBefore() const = 0;
  // A round attempt that drew its cohort ended (published, refused,
  // abandoned, or drawn too small to run): charges it and puts the
  // budget's figures so far in `report`.
  virtual void Charge(RoundReport& report) = 0;
  // What the checkpoint keeps (JSON text), and its restoration:
  // InvalidArgument naming what does not fit this job.
  virtual std::string State() const = 0;
  virtual absl::Status Restore(const std::string& state) = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_BUDGET_H_
