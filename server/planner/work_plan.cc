#include "server/planner/work_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "server/planner/ilp_planner.h"

namespace fedberry::server::planner {

double FinishSeconds(const ClientCapacity& c, int64_t steps) {
  // A client planned no steps takes no part in the round.
  if (steps <= 0) return 0;
  return c.fixed_seconds + static_cast<double>(steps) * c.step_seconds;
}

double Makespan(const PlanRequest& request, const std::vector<int64_t>& steps) {
  double m = 0;
  for (size_t i = 0; i < request.clients.size() && i < steps.size(); ++i) {
    m = std::max(m, FinishSeconds(request.clients[i], steps[i]));
  }
  return m;
}

absl::Status ValidateRequest(const PlanRequest& request) {
  int64_t lo = 0, hi = 0;
  for (const ClientCapacity& c : request.clients) {
    if (!std::isfinite(c.step_seconds) || c.step_seconds < 0 ||
        !std::isfinite(c.fixed_seconds) || c.fixed_seconds < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "client ", c.id, " has a negative or non-finite time (",
          c.step_seconds, " s/step, ", c.fixed_seconds, " s fixed)"));
    }
    if (c.min_steps < 0 || c.min_steps > c.max_steps) {
      return absl::InvalidArgumentError(
          absl::StrCat("client ", c.id, " has bounds [", c.min_steps, ", ",
                       c.max_steps, "]; need 0 <= min <= max"));
    }
    lo += c.min_steps;
    hi += c.max_steps;
  }
  if (request.total_steps < lo || request.total_steps > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("total of ", request.total_steps,
                     " steps is outside what the bounds "
                     "allow [",
                     lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePlan(const PlanRequest& request,
                          const std::vector<int64_t>& steps) {
  if (steps.size() != request.clients.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan has ", steps.size(), " entries for ",
                     request.clients.size(), " clients"));
  }
  int64_t sum = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const ClientCapacity& c = request.clients[i];
    if (steps[i] < c.min_steps || steps[i] > c.max_steps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "client ", c.id, " is planned ", steps[i], " steps, outside [",
          c.min_steps, ", ", c.max_steps, "]"));
    }
    sum += steps[i];
  }
  if (sum != request.total_steps) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan sums to ", sum, " steps, not ", request.total_steps));
  }
  return absl::OkStatus();
}

std::vector<int64_t> BalanceWithin(const PlanRequest& request, double makespan,
                                   const std::vector<int64_t>& steps) {
  const int64_t n = static_cast<int64_t>(request.clients.size());
  if (n == 0 || ValidatePlan(request, steps).ok() == false) return steps;
  const double limit = makespan * (1 + 1e-12) + 1e-12;
  std::vector<int64_t> cap(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    const ClientCapacity& c = request.clients[i];
    int64_t most = c.max_steps;
    if (c.fixed_seconds + c.step_seconds > limit) {
      most = 0;  // cannot take part without passing the makespan
    } else if (c.step_seconds > 0) {
      most = std::min<int64_t>(
          most, static_cast<int64_t>(
                    std::floor((limit - c.fixed_seconds) / c.step_seconds)));
    }
    // Never below what the given plan already does within the makespan.
    cap[i] = std::max(most, steps[i]);
  }
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t share =
        request.total_steps / n + (i < request.total_steps % n ? 1 : 0);
    out[i] = std::clamp(share, request.clients[i].min_steps, cap[i]);
    sum += out[i];
  }
  while (sum != request.total_steps) {
    const bool add = sum < request.total_steps;
    bool moved = false;
    for (int64_t i = 0; i < n && sum != request.total_steps; ++i) {
      if (add && out[i] < cap[i]) {
        ++out[i];
        ++sum;
        moved = true;
      } else if (!add && out[i] > request.clients[i].min_steps) {
        --out[i];
        --sum;
        moved = true;
      }
    }
    if (!moved) return steps;
  }
  if (!ValidatePlan(request, out).ok() ||
      Makespan(request, out) > Makespan(request, steps)) {
    return steps;
  }
  return out;
}

absl::StatusOr<Plan> UniformPlanner::MakePlan(
    const PlanRequest& request) const {
  if (absl::Status s = ValidateRequest(request); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(request.clients.size());
  Plan plan;
  plan.planner = name();
  if (n == 0) return plan;
  plan.steps.resize(n);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const ClientCapacity& c = request.clients[i];
    const int64_t share =
        request.total_steps / n + (i < request.total_steps % n ? 1 : 0);
    plan.steps[i] = std::clamp(share, c.min_steps, c.max_steps);
    sum += plan.steps[i];
  }
  // Clamping may have freed or taken steps: even it out one step at a time
  // over the clients that still have room (the request is feasible, so this
  // ends).
  while (sum != request.total_steps) {
    const bool add = sum < request.total_steps;
    for (int64_t i = 0; i < n && sum != request.total_steps; ++i) {
      const ClientCapacity& c = request.clients[i];
      if (add && plan.steps[i] < c.max_steps) {
        ++plan.steps[i];
        ++sum;
      } else if (!add && plan.steps[i] > c.min_steps) {
        --plan.steps[i];
        --sum;
      }
    }
  }
  plan.makespan = Makespan(request, plan.steps);
  return plan;
}

absl::StatusOr<Plan> GreedyPlanner::MakePlan(const PlanRequest& request) const {
  if (absl::Status s = ValidateRequest(request); !s.ok()) return s;
  const size_t n = request.clients.size();
  Plan plan;
  plan.planner = name();
  plan.steps.resize(n);
  int64_t left = request.total_steps;
  // (finishing time with one more step, client index): smallest first.
  using Entry = std::pair<double, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> next;
  for (size_t i = 0; i < n; ++i) {
    const ClientCapacity& c = request.clients[i];
    plan.steps[i] = c.min_steps;
    left -= c.min_steps;
    if (plan.steps[i] < c.max_steps) {
      next.push({FinishSeconds(c, plan.steps[i] + 1), i});
    }
  }
  while (left > 0 && !next.empty()) {
    const size_t i = next.top().second;
    next.pop();
    const ClientCapacity& c = request.clients[i];
    // Hand out as many steps as keep this client no later than the runner-up
    // would be with its next step: same plan as one at a time, fewer pops.
    int64_t take = 1;
    if (!next.empty() && c.step_seconds > 0) {
      const double limit = next.top().first;
      const double room =
          (limit - FinishSeconds(c, plan.steps[i] + 1)) / c.step_seconds;
      if (room >= 1) {
        take += static_cast<int64_t>(std::floor(room + 1e-9));
      }
    }
    take = std::min({take, left, c.max_steps - plan.steps[i]});
    plan.steps[i] += take;
    left -= take;
    if (plan.steps[i] < c.max_steps) {
      next.push({FinishSeconds(c, plan.steps[i] + 1), i});
    }
  }
  plan.makespan = Makespan(request, plan.steps);
  plan.steps = BalanceWithin(request, plan.makespan, plan.steps);
  plan.makespan = Makespan(request, plan.steps);
  return plan;
}

absl::StatusOr<std::unique_ptr<WorkPlanner>> MakePlanner(
    absl::string_view name, const PlannerOptions& options) {
  if (name == "uniform") return std::make_unique<UniformPlanner>();
  if (name == "greedy") return std::make_unique<GreedyPlanner>();
  if (name == "ilp") {
    return std::make_unique<IlpPlanner>(options.ilp_time_limit_seconds);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown planner '", name, "'; choose one of ", kPlannerNames));
}

}  // namespace fedberry::server::planner
