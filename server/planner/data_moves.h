// Planning the opt-in "data moves" mode: in a trusted edge cluster the server
// may, for one round, move training samples from slow clients to fast ones
// (through the server) so that the round's clients finish close together.
// Each client then trains `epochs` passes over the samples it ends up with.
//
// The cost model, for client i training x_i of the samples (held_i held):
//   out_i = max(0, held_i - x_i), in_i = max(0, x_i - held_i), B = bytes/sample
//   U     = max over senders j (out_j > 0) of out_j * B * upload_j
//   a client with in_i == 0: t_i = fixed_i + out_i*B*upload_i + E*x_i*sps_i
//   a receiver (in_i > 0):   t_i = fixed_i + U + in_i*B*download_i
//                                  + E*x_i*sps_i
// (senders upload at round start; a receiver waits for the slowest sender,
// then downloads what it gets). A client with x_i == 0 that held nothing
// takes no part (t_i = 0); one that sent everything still pays fixed +
// upload. The makespan is max_i t_i.
//
// A plan is the vector x. Only clients that allow moves may change their
// count, and every change is a whole multiple of MoveRequest::unit (e.g. the
// batch size). There is no exception for a client's last partial unit: a
// client holding 70 samples with unit 32 can send 32 or 64, never all 70, so
// every piece moved is whole units and the receivers get whole units too.
// A client that holds at least one unit keeps at least one unit: it still
// trains and sends an update (a board left with no samples has none, and
// the round would wait for it).
//
// Planners: none (keep everything), greedy (local search one unit at a
// time) and ilp (a GLPK mixed-integer program, greedy as fallback and bar).
// Pure C++, no LibTorch. data_moves.cc holds the cost model's public face,
// the checks, PairMoves and NoMoves; greedy_moves.cc and ilp_moves.cc the
// two planners; move_model.h the model's terms they all share.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_PLANNER_DATA_MOVES_H_
#define FEDBERRY_SERVER_PLANNER_DATA_MOVES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fedberry::server::planner {

struct MoveClient {
  std::string id;
  uint64_t samples = 0;       // samples the client holds
  bool allows_moves = false;  // opted in; else it neither sends nor receives
  double seconds_per_sample = 0;         // training, one sample one epoch, >= 0
  double fixed_seconds = 0;              // model download + update upload, >= 0
  double upload_seconds_per_byte = 0;    // >= 0
  double download_seconds_per_byte = 0;  // >= 0
};

struct MoveRequest {
  std::vector<MoveClient> clients;
  int epochs = 1;                 // >= 1
  uint64_t bytes_per_sample = 0;  // on the wire, > 0
  uint64_t unit = 1;  // moves are whole multiples of this many samples, >= 1
};

struct DataMove {
  size_t from = 0;  // indices into MoveRequest::clients
  size_t to = 0;
  uint64_t samples = 0;
};

struct MovePlan {
  // Per client, in request order: held - sent + received.
  std::vector<uint64_t> samples;
  std::vector<DataMove> moves;  // senders to receivers
  double makespan = 0;          // predicted, MoveMakespan(request, samples)
  std::string planner;          // "none", "greedy", "ilp"
  std::string note;             // e.g. why the ILP fell back to greedy
};

// Predicted finishing time of client i when the clients train `samples`
// (the cost model above; U depends on every client's count). 0 when i is
// out of range.
double MoveFinishSeconds(const MoveRequest& r,
                         const std::vector<uint64_t>& samples, size_t i);
// max_i MoveFinishSeconds (0 for no clients).
double MoveMakespan(const MoveRequest& r, const std::vector<uint64_t>& samples);

// InvalidArgument unless the request can be planned: finite non-negative
// times, epochs >= 1, unit >= 1, bytes_per_sample > 0, and at most 2^53
// samples in all (so counts stay exact in the solver's doubles).
absl::Status ValidateMoveRequest(const MoveRequest& r);
// InvalidArgument unless `samples` is a plan for a valid `r`: one entry per
// client, summing to the held total, clients that do not allow moves keep
// exactly their held count, every change from held is a multiple of unit
// (no exception for sending a client's whole, non-multiple count), and a
// client keeps at least min(held, unit).
absl::Status ValidateMovePlan(const MoveRequest& r,
                              const std::vector<uint64_t>& samples);

// The moves that turn the held counts into `samples`: senders and receivers
// are walked in client order, each piece as large as both sides allow, so
// there are at most senders + receivers - 1 pieces. Moves out of i sum to
// out_i and moves into i to in_i (for a plan that conserves the total); for
// a valid plan every piece is a multiple of unit.
std::vector<DataMove> PairMoves(const MoveRequest& r,
                                const std::vector<uint64_t>& samples);

// Everyone keeps its data; planner "none".
MovePlan NoMoves(const MoveRequest& r);

// Local search from "everyone keeps its data": repeatedly takes the client
// that finishes last and moves one unit from it to whichever other opted-in
// client gives the smallest makespan (ties: the one that then finishes
// earliest), while that makespan drops, or stays and fewer clients are left
// at it (so two equally slow clients can both shed work). Then units that do
// not shorten the round are moved back, and if the round is not shorter at
// all nothing moves. A heuristic (the wait for the slowest sender couples
// the clients), but it matched the optimum on thousands of small random
// instances. The search is O(moves * clients^2), the clean-up O(clients^3)
// per pass plus O(clients) per unit moved back. InvalidArgument for an
// invalid request.
absl::StatusOr<MovePlan> GreedyMoves(const MoveRequest& r);

// The same problem as a mixed-integer program solved by GLPK, with integer
// units sent / received per client and a binary "is receiver" per client
// (big-M) so that only receivers wait for U; x_i = held_i + unit*(in_i -
// out_i), and clients that do not allow moves have out_i = in_i = 0:
//
//   minimise T
//   s.t.  sum_i (in_i - out_i) = 0                       (units)
//         out_i <= H_i (1 - r_i),  in_i <= K_i r_i
//                      (H_i = (held_i - min(held_i, unit)) / unit)
//         U >= unit*B*upload_j*out_j                      for each j
//         T >= fixed_i + unit*B*upload_i*out_i + E*sps_i*x_i      (all i)
//         T >= fixed_i + U + unit*B*download_i*in_i + E*sps_i*x_i
//              - M_i (1 - r_i)                            (receivers)
//         T <= greedy's makespan                           (prunes the search)
//
// Falls back to GreedyMoves (saying why in MovePlan::note) when GLPK is not
// built in, fails, or runs out of time without a plan; never returns a plan
// with a larger makespan than greedy's (on a tie it keeps whichever moves
// fewer samples). InvalidArgument for an invalid request.
absl::StatusOr<MovePlan> IlpMoves(const MoveRequest& r,
                                  double time_limit_seconds = 1.0);

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_DATA_MOVES_H_
