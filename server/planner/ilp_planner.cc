#include "server/planner/ilp_planner.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"

#ifdef FEDBERRY_HAVE_GLPK
#include "server/planner/glpk_mip.h"
#endif

namespace fedberry::server::planner {

bool IlpPlanner::SolverAvailable() {
#ifdef FEDBERRY_HAVE_GLPK
  return true;
#else
  return false;
#endif
}

namespace {

#ifdef FEDBERRY_HAVE_GLPK
// Solves the program; the steps, or an error saying why there are none.
absl::StatusOr<std::vector<int64_t>> Solve(const PlanRequest& request,
                                           double time_limit_seconds) {
  const int n = static_cast<int>(request.clients.size());
  GlpkProblem lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  // Columns: 1 = T, 2..n+1 = s_i, n+2..2n+1 = y_i.
  glp_add_cols(lp.get(), 1 + 2 * n);
  glp_set_col_bnds(lp.get(), 1, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp.get(), 1, 1.0);
  for (int i = 0; i < n; ++i) {
    const ClientCapacity& c = request.clients[i];
    const int s = 2 + i, y = 2 + n + i;
    glp_set_col_kind(lp.get(), s, GLP_IV);
    if (c.min_steps == c.max_steps) {
      glp_set_col_bnds(lp.get(), s, GLP_FX, c.min_steps, c.max_steps);
    } else {
      glp_set_col_bnds(lp.get(), s, GLP_DB, c.min_steps, c.max_steps);
    }
    glp_set_col_kind(lp.get(), y, GLP_BV);
    if (c.min_steps > 0) glp_set_col_bnds(lp.get(), y, GLP_FX, 1, 1);
    if (c.max_steps == 0) glp_set_col_bnds(lp.get(), y, GLP_FX, 0, 0);
  }
  // Rows: n makespan rows, n participation rows, one total row.
  glp_add_rows(lp.get(), 2 * n + 1);
  std::vector<int> ia(1), ja(1);
  std::vector<double> ar(1);
  auto put = [&](int row, int col, double v) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(v);
  };
  for (int i = 0; i < n; ++i) {
    const ClientCapacity& c = request.clients[i];
    const int s = 2 + i, y = 2 + n + i;
    // T - step_i s_i - fixed_i y_i >= 0
    glp_set_row_bnds(lp.get(), 1 + i, GLP_LO, 0.0, 0.0);
    put(1 + i, 1, 1.0);
    put(1 + i, s, -c.step_seconds);
    put(1 + i, y, -c.fixed_seconds);
    // s_i - max_i y_i <= 0
    glp_set_row_bnds(lp.get(), 1 + n + i, GLP_UP, 0.0, 0.0);
    put(1 + n + i, s, 1.0);
    put(1 + n + i, y, -static_cast<double>(c.max_steps));
    put(2 * n + 1, s, 1.0);
  }
  glp_set_row_bnds(lp.get(), 2 * n + 1, GLP_FX,
                   static_cast<double>(request.total_steps),
                   static_cast<double>(request.total_steps));
  glp_load_matrix(lp.get(), static_cast<int>(ia.size()) - 1, ia.data(),
                  ja.data(), ar.data());

  const int ret = SolveMip(lp.get(), time_limit_seconds);
  const int status = glp_mip_status(lp.get());
  if (status != GLP_OPT && status != GLP_FEAS) {
    return absl::UnavailableError(
        ret == GLP_ETMLIM
            ? absl::StrCat("GLPK found no plan within its ", time_limit_seconds,
                           " s budget")
            : absl::StrCat("GLPK returned code ", ret, ", status ", status));
  }
  std::vector<int64_t> steps(n);
  for (int i = 0; i < n; ++i) {
    steps[i] = std::llround(glp_mip_col_val(lp.get(), 2 + i));
  }
  if (absl::Status s = ValidatePlan(request, steps); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("GLPK's solution is not a plan: ", s.message()));
  }
  return steps;
}
#endif

}  // namespace

absl::StatusOr<Plan> IlpPlanner::MakePlan(const PlanRequest& request) const {
  if (absl::Status s = ValidateRequest(request); !s.ok()) return s;
  // The greedy plan is both the fallback and the bar the ILP must clear.
  absl::StatusOr<Plan> greedy = GreedyPlanner().MakePlan(request);
  if (!greedy.ok()) return greedy.status();
  greedy->planner = "greedy";
  if (request.clients.empty()) {
    greedy->planner = name();
    return greedy;
  }
#ifdef FEDBERRY_HAVE_GLPK
  absl::StatusOr<std::vector<int64_t>> steps =
      Solve(request, time_limit_seconds_);
  if (!steps.ok()) {
    greedy->note =
        absl::StrCat("ilp fell back to greedy: ", steps.status().message());
    return greedy;
  }
  Plan plan;
  plan.planner = name();
  plan.steps = *std::move(steps);
  plan.makespan = Makespan(request, plan.steps);
  plan.steps = BalanceWithin(request, plan.makespan, plan.steps);
  plan.makespan = Makespan(request, plan.steps);
  // GLPK works in floating point; never hand out a plan worse than greedy's.
  if (plan.makespan > greedy->makespan) {
    greedy->note = absl::StrCat("ilp kept the greedy plan: GLPK's makespan ",
                                plan.makespan, " s exceeds greedy's ",
                                greedy->makespan, " s");
    return greedy;
  }
  return plan;
#else
  greedy->note = "ilp fell back to greedy: this build has no GLPK";
  return greedy;
#endif
}

}  // namespace fedberry::server::planner
