// The ILP planner: the round's plan as an integer program solved by GLPK
// (Debian's libglpk), minimising the makespan T:
//
//   minimise T
//   s.t.  T >= fixed_i * y_i + step_i * s_i   for each client i
//         s_i <= max_i * y_i                  (y_i = 1: client i takes part)
//         min_i <= s_i <= max_i, s_i integer, y_i binary (1 when min_i > 0)
//         sum_i s_i = total
//
// It falls back to the greedy plan (and says why in Plan::note) when GLPK is
// not built in, fails, or exceeds its time budget without a solution; it
// never returns a plan with a larger makespan than the greedy one.
#ifndef FEDBERRY_SERVER_PLANNER_ILP_PLANNER_H_
#define FEDBERRY_SERVER_PLANNER_ILP_PLANNER_H_

#include "server/planner/work_plan.h"

namespace fedberry::server::planner {

class IlpPlanner : public WorkPlanner {
 public:
  explicit IlpPlanner(double time_limit_seconds = 1.0)
      : time_limit_seconds_(time_limit_seconds) {}
  std::string name() const override { return "ilp"; }
  absl::StatusOr<Plan> MakePlan(const PlanRequest& request) const override;

  // Whether this build has GLPK (else every plan is the greedy fallback).
  static bool SolverAvailable();

 private:
  double time_limit_seconds_;
};

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_ILP_PLANNER_H_
