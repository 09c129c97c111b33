#include "secagg/neighbours.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "secagg/mask.h"

namespace fedberry::secagg {
namespace {

// Uniform words from the seed's ChaCha20 stream (mask.h's expansion, 32-bit
// words), drawn in blocks; a block is re-expanded longer when rejection
// sampling needs more words than the first guess.
class SeedStream {
 public:
  explicit SeedStream(const GraphSeed& seed) : seed_(seed) {}

  // Uniform in [0, bound) by rejection, so no value is favoured.
  absl::StatusOr<uint32_t> Below(uint32_t bound) {
    const uint64_t limit = (uint64_t{1} << 32) - (uint64_t{1} << 32) % bound;
    for (;;) {
      if (next_ == words_.size()) {
        absl::StatusOr<std::vector<uint32_t>> more =
            ExpandMask(seed_, std::max<uint64_t>(256, 2 * words_.size()), 32);
        if (!more.ok()) return more.status();
        // The longer stream repeats the words already used as its prefix.
        words_ = *std::move(more);
      }
      const uint32_t w = words_[next_++];
      if (w < limit) return static_cast<uint32_t>(w % bound);
    }
  }

 private:
  Key256 seed_;
  std::vector<uint32_t> words_;
  size_t next_ = 0;
};

}  // namespace

absl::StatusOr<NeighbourGraph> NeighbourGraph::Create(int n, int neighbours,
                                                      const GraphSeed& seed) {
  if (n < 2 || n > kMaxCohort || neighbours < 1 || neighbours > n - 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "neighbour graph of %d boards with %d neighbours each; 2..%d boards "
        "and 1..n-1 neighbours are possible",
        n, neighbours, kMaxCohort));
  }
  // Fisher-Yates: the board at each ring position.
  std::vector<uint32_t> at(n);
  for (int i = 0; i < n; ++i) at[i] = static_cast<uint32_t>(i);
  SeedStream stream(seed);
  for (int i = n - 1; i > 0; --i) {
    absl::StatusOr<uint32_t> j = stream.Below(static_cast<uint32_t>(i + 1));
    if (!j.ok()) return j.status();
    std::swap(at[i], at[*j]);
  }
  std::vector<std::vector<uint32_t>> adjacency(n);
  auto link = [&](int p, int q) {
    adjacency[at[p]].push_back(at[q]);
    adjacency[at[q]].push_back(at[p]);
  };
  // Harary H(K, n): positions within K / 2 on the ring; for odd K a
  // diameter. Distances up to K / 2 never reach the diameter's, so no edge
  // is added twice.
  for (int p = 0; p < n; ++p) {
    for (int d = 1; d <= neighbours / 2; ++d) link(p, (p + d) % n);
  }
  if (neighbours % 2 == 1) {
    if (n % 2 == 0) {
      for (int p = 0; p < n / 2; ++p) link(p, p + n / 2);
    } else {
      // Odd n: (n + 1) / 2 near-diameters cover every position once and
      // position 0 twice.
      for (int p = 0; p <= (n - 1) / 2; ++p) link(p, (p + (n + 1) / 2) % n);
    }
  }
  for (std::vector<uint32_t>& list : adjacency) {
    std::sort(list.begin(), list.end());
  }
  return NeighbourGraph(neighbours, std::move(adjacency));
}

absl::Span<const uint32_t> NeighbourGraph::Of(uint32_t board) const {
  if (board >= adjacency_.size()) return {};
  return adjacency_[board];
}

bool NeighbourGraph::Adjacent(uint32_t a, uint32_t b) const {
  const absl::Span<const uint32_t> list = Of(a);
  return std::binary_search(list.begin(), list.end(), b);
}

}  // namespace fedberry::secagg
