// Work planning for synchronous rounds: how many local steps each selected
// client trains so that all of them finish close together while the round's
// total work stays what the job asked for.
//
// The model of a client's round: it downloads the model, trains s steps and
// uploads its update, taking
//     t_i(s) = fixed_seconds_i + s * step_seconds_i
// seconds; the round's makespan is max_i t_i(s_i). A plan assigns integer
// steps s_i within [min_steps_i, max_steps_i] summing to the round's total.
// Planners (uniform, greedy, ilp) differ only in how they choose the s_i.
// No LibTorch here: planners are small, pure and unit-tested.
#ifndef FEDBERRY_SERVER_PLANNER_WORK_PLAN_H_
#define FEDBERRY_SERVER_PLANNER_WORK_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::server::planner {

// One selected client as the planner sees it.
struct ClientCapacity {
  std::string id;
  double step_seconds = 0;   // one local step (batch), >= 0
  double fixed_seconds = 0;  // model download + update upload, >= 0
  int64_t min_steps = 0;     // bounds on this client's steps
  int64_t max_steps = 0;
};

struct PlanRequest {
  std::vector<ClientCapacity> clients;
  int64_t total_steps = 0;  // the round's work: sum of planned steps
};

struct Plan {
  std::vector<int64_t> steps;  // per client, in request order
  double makespan = 0;         // predicted max_i t_i(steps_i)
  std::string planner;         // who made it ("greedy", "ilp", ...)
  std::string note;            // e.g. why the ILP fell back to greedy
};

// Predicted finishing time of client `c` with `steps` steps.
double FinishSeconds(const ClientCapacity& c, int64_t steps);
// Predicted makespan of `steps` for `request` (0 for no clients).
double Makespan(const PlanRequest& request, const std::vector<int64_t>& steps);

// InvalidArgument unless the request can be planned: finite non-negative
// times, 0 <= min <= max per client, and sum(min) <= total <= sum(max).
absl::Status ValidateRequest(const PlanRequest& request);
// InvalidArgument unless `steps` is a plan for `request`: one entry per
// client, each within its bounds, summing to total_steps.
absl::Status ValidatePlan(const PlanRequest& request,
                          const std::vector<int64_t>& steps);

// Among the plans whose makespan is at most `makespan`, one as close to
// uniform as the bounds and that makespan allow: each client gets its even
// share clamped to what it can do by then, and what remains goes round-robin
// to clients with room. Used by greedy and ILP so that steps a faster client
// would not need are not piled on it (e.g. when one client's transfer time
// sets the makespan). Returns `steps` unchanged if it cannot improve them.
std::vector<int64_t> BalanceWithin(const PlanRequest& request, double makespan,
                                   const std::vector<int64_t>& steps);

class WorkPlanner {
 public:
  virtual ~WorkPlanner() = default;
  virtual std::string name() const = 0;
  // A valid plan for a valid request; InvalidArgument for an invalid one.
  virtual absl::StatusOr<Plan> MakePlan(const PlanRequest& request) const = 0;
};

// Equal steps for everyone (today's behaviour), the remainder going one step
// each to the first clients; clamped into the bounds, with what clamping
// frees or needs moved to the clients that still have room.
class UniformPlanner : public WorkPlanner {
 public:
  std::string name() const override { return "uniform"; }
  absl::StatusOr<Plan> MakePlan(const PlanRequest& request) const override;
};

// Starts every client at its minimum and hands out the remaining steps one
// at a time, each to the client that would finish it earliest (ties: the
// earlier client in the request). For this model (finishing times that grow
// with steps, one sum constraint) that is a min-makespan plan; it costs
// O(total_steps log clients).
class GreedyPlanner : public WorkPlanner {
 public:
  std::string name() const override { return "greedy"; }
  absl::StatusOr<Plan> MakePlan(const PlanRequest& request) const override;
};

// Names accepted by MakePlanner.
inline constexpr char kPlannerNames[] = "uniform, greedy, ilp";

struct PlannerOptions {
  double ilp_time_limit_seconds = 1.0;  // GLPK's budget; then greedy
};

// "uniform", "greedy" or "ilp"; InvalidArgument for another name.
absl::StatusOr<std::unique_ptr<WorkPlanner>> MakePlanner(
    absl::string_view name, const PlannerOptions& options = {});

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_WORK_PLAN_H_
