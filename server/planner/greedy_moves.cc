// The greedy data-move planner (GreedyMoves in data_moves.h): a local
// search one unit at a time from "everyone keeps its data", then the
// clean-up of units that buy nothing.
// Thread-safety: pure functions.
#include <cstdint>
#include <utility>
#include <vector>

#include "server/planner/data_moves.h"
#include "server/planner/move_model.h"

namespace fedberry::server::planner {
namespace {

// Whether greedy candidate `a` beats `b`: a clearly smaller makespan, else
// fewer clients at it, else the receiver that then finishes earlier (else
// the first unit would go to the first client and every later one follow
// it, piling the data on one receiver that soon cannot take more without
// the round waiting for it).
bool Better(const Span& a, const Span& b) {
  const double tol = MakespanTolerance(b.makespan);
  if (a.makespan < b.makespan - tol) return true;
  if (a.makespan > b.makespan + tol) return false;
  if (a.at_makespan != b.at_makespan) return a.at_makespan < b.at_makespan;
  if (a.receiver_seconds != b.receiver_seconds) {
    return a.receiver_seconds < b.receiver_seconds;
  }
  return a.makespan < b.makespan;
}

// The greedy local search (see GreedyMoves), without the clean-up.
std::vector<uint64_t> GreedyCounts(const MoveRequest& r) {
  const size_t n = r.clients.size();
  const uint64_t unit = r.unit;
  std::vector<uint64_t> x = HeldCounts(r);
  std::vector<double> times, scratch;
  Span now = Measure(r, x, times);
  uint64_t total = 0;
  for (uint64_t h : x) total += h;
  // Every accepted step lowers (makespan, clients at it), so no plan repeats
  // and this bound is never reached; it only guards against float surprises.
  const uint64_t max_steps = (total / unit + 1) * n;
  for (uint64_t step = 0; step < max_steps; ++step) {
    // The client that finishes last. If any client at the makespan cannot
    // shed a unit, sending from the others cannot shorten the round.
    const double tol = MakespanTolerance(now.makespan);
    size_t from = n;
    bool stuck = false;
    for (size_t i = 0; i < n; ++i) {
      if (times[i] < now.makespan - tol) continue;
      if (!r.clients[i].allows_moves || x[i] < KeepAtLeast(r, i) + unit) {
        stuck = true;
      }
      if (from == n || times[i] > times[from]) from = i;
    }
    if (stuck || from == n) break;
    // One unit to each other opted-in client; keep the best. x is net, so a
    // unit out of a receiver just lowers what it receives.
    size_t to = n;
    Span best;
    x[from] -= unit;
    for (size_t j = 0; j < n; ++j) {
      if (j == from || !r.clients[j].allows_moves) continue;
      x[j] += unit;
      Span s = Measure(r, x, scratch);
      s.receiver_seconds = scratch[j];
      x[j] -= unit;
      if (to == n || Better(s, best)) {
        to = j;
        best = s;
      }
    }
    x[from] += unit;
    if (to == n) break;
    const bool shorter = best.makespan < now.makespan - tol;
    const bool fewer_last =
        best.makespan <= now.makespan && best.at_makespan < now.at_makespan;
    if (!shorter && !fewer_last) break;
    x[from] -= unit;
    x[to] += unit;
    now = Measure(r, x, times);
  }
  return x;
}

}  // namespace

absl::StatusOr<MovePlan> GreedyMoves(const MoveRequest& r) {
  if (absl::Status s = ValidateMoveRequest(r); !s.ok()) return s;
  std::vector<uint64_t> x = GreedyCounts(r);
  MoveBackUnneeded(r, x);
  MovePlan plan = MakeMovePlan(r, std::move(x), "greedy");
  // Moves that do not shorten the round are not worth making.
  MovePlan none = NoMoves(r);
  if (plan.makespan >= none.makespan - MakespanTolerance(none.makespan)) {
    none.planner = "greedy";
    return none;
  }
  return plan;
}

}  // namespace fedberry::server::planner
