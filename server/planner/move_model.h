// The data-move cost model of data_moves.h in the terms its planners share
// (data_moves.cc, greedy_moves.cc, ilp_moves.cc): what a client sends or
// receives under a plan, the wait for the slowest sender (U), a client's
// finishing time (t_i), when two makespans count as the same, a plan's span,
// the clean-up every plan goes through, and a MovePlan made from counts.
// Internal to the planner target. Pure C++, no LibTorch.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_PLANNER_MOVE_MODEL_H_
#define FEDBERRY_SERVER_PLANNER_MOVE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/planner/data_moves.h"

namespace fedberry::server::planner {

// Makespans closer than this are the same: the cost model sums doubles in
// different orders for different plans.
double MakespanTolerance(double makespan);

// What client i trains at least: a whole unit of its own when it holds one,
// so no sender is left with nothing to train (a board with no samples has no
// update to send, and the round would wait for it).
uint64_t KeepAtLeast(const MoveRequest& r, size_t i);

// out_i and in_i of the plan `x`.
uint64_t SamplesOut(const MoveRequest& r, const std::vector<uint64_t>& x,
                    size_t i);
uint64_t SamplesIn(const MoveRequest& r, const std::vector<uint64_t>& x,
                   size_t i);

// U: how long the slowest sender takes to upload what it sends.
double SenderWait(const MoveRequest& r, const std::vector<uint64_t>& x);

// t_i for client i training x_i samples when the slowest sender needs
// `wait` seconds. Every makespan here goes through this one function, so
// the planners' numbers and MoveMakespan's agree to the last bit.
double ClientSeconds(const MoveRequest& r, const std::vector<uint64_t>& x,
                     size_t i, double wait);

// The held counts: the plan that moves nothing.
std::vector<uint64_t> HeldCounts(const MoveRequest& r);

// The makespan of a plan, and how many clients finish within tolerance of
// it (what the greedy search lowers when the makespan itself is tied).
struct Span {
  double makespan = 0;
  int at_makespan = 0;
  double receiver_seconds = 0;  // greedy: the receiving client's finish
};

// Fills `times` (resized to the clients) and returns the span.
Span Measure(const MoveRequest& r, const std::vector<uint64_t>& x,
             std::vector<double>& times);

// Moves units back from receivers to senders while the makespan stays at
// most what it is: a plan may move data that buys nothing (the ILP only
// minimises the makespan; greedy may unload a client that was tied with one
// it could not help), and every sample moved costs bandwidth and exposure.
void MoveBackUnneeded(const MoveRequest& r, std::vector<uint64_t>& x);

// The plan of counts `x` by `planner`: its moves (PairMoves) and makespan.
MovePlan MakeMovePlan(const MoveRequest& r, std::vector<uint64_t> x,
                      std::string planner);
uint64_t SamplesMoved(const MovePlan& plan);

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_MOVE_MODEL_H_
