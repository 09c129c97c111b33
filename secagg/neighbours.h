// The SecAgg+ neighbour graph (Bell et al. 2020, section 3): instead of
// sharing and masking with all n - 1 others, each board of a cohort does so
// with about K neighbours. The graph is a Harary graph H(K, n) (a ring where
// each position links to the K / 2 nearest on either side, plus a diameter
// when K is odd) laid over a permutation of the boards drawn from the
// session's 32-byte seed, so each board's neighbours are a uniform-looking
// K-subset (the model parameters.h assumes) and every party that knows the
// seed derives the same graph. The graph is symmetric: i is j's neighbour
// exactly when j is i's.
//
// Degrees: K-regular when n * K is even. When K and n are both odd no
// K-regular graph exists; Harary's construction then gives one board K + 1
// neighbours, which only helps that board's correctness.
//
// Thread-safety: const after construction.
#ifndef FEDBERRY_SECAGG_NEIGHBOURS_H_
#define FEDBERRY_SECAGG_NEIGHBOURS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace fedberry::secagg {

// Drawn by the server for each session (OsRandom) and sent to every board.
using GraphSeed = std::array<uint8_t, 32>;

inline constexpr int kMaxCohort = 65535;

class NeighbourGraph {
 public:
  // The graph of boards 0..n-1 with `neighbours` (K) each:
  // 2 <= n <= kMaxCohort, 1 <= K <= n - 1. InvalidArgument otherwise;
  // Internal when the seed's stream cannot be made (OpenSSL).
  static absl::StatusOr<NeighbourGraph> Create(int n, int neighbours,
                                               const GraphSeed& seed);

  int size() const { return static_cast<int>(adjacency_.size()); }
  int degree() const { return degree_; }
  // Board `board`'s neighbours in increasing order (never itself); empty
  // for a board outside 0..n-1.
  absl::Span<const uint32_t> Of(uint32_t board) const;
  // Whether a and b are neighbours (false for a == b or either out of range).
  bool Adjacent(uint32_t a, uint32_t b) const;

 private:
  NeighbourGraph(int degree, std::vector<std::vector<uint32_t>> adjacency)
      : degree_(degree), adjacency_(std::move(adjacency)) {}

  int degree_;
  std::vector<std::vector<uint32_t>> adjacency_;
};

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_NEIGHBOURS_H_
