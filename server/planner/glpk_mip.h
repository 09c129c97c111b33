// What the planners' GLPK programs (ilp_planner.cc, ilp_moves.cc) share:
// the owner of a problem, and an exact, quiet branch and bound within a
// time budget. Include only where FEDBERRY_HAVE_GLPK is defined.
#ifndef FEDBERRY_SERVER_PLANNER_GLPK_MIP_H_
#define FEDBERRY_SERVER_PLANNER_GLPK_MIP_H_

#include <glpk.h>

#include <algorithm>
#include <memory>

namespace fedberry::server::planner {

struct GlpkProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};
using GlpkProblem = std::unique_ptr<glp_prob, GlpkProbDeleter>;

// Solves `p` to optimality (gap 0, presolved) in at most `seconds`;
// returns glp_intopt's code (GLP_ETMLIM: out of time).
inline int SolveMip(glp_prob* p, double seconds) {
  glp_iocp params;
  glp_init_iocp(&params);
  params.presolve = GLP_ON;
  params.msg_lev = GLP_MSG_OFF;
  params.mip_gap = 0.0;
  params.tm_lim = static_cast<int>(std::clamp(seconds * 1000.0, 1.0, 3.6e6));
  return glp_intopt(p, &params);
}

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_GLPK_MIP_H_
