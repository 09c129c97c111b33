// Krum and multi-Krum (Blanchard et al., "Machine Learning with Adversaries:
// Byzantine Tolerant Gradient Descent", NeurIPS 2017): each update is scored
// by the sum of its squared distances to its n - f - 2 nearest other
// updates; krum takes the update with the lowest score, multikrum the
// weighted mean of the m lowest. Needs n > 2f + 2 updates in a round.
// Updates wait in an UpdateStore; Result computes the n x n distances a
// block of coordinates at a time: O(n^2 * model) work and O(n^2) memory for
// the distances (8 bytes each: 80 MB at 3,200 updates), so it suits rounds
// of up to a few thousand updates.
// Thread-safety: see strategy.h.
#ifndef FEDBERRY_SERVER_STRATEGY_KRUM_H_
#define FEDBERRY_SERVER_STRATEGY_KRUM_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// For options.name krum or multikrum (validated by the caller).
absl::StatusOr<std::unique_ptr<Strategy>> MakeKrum(
    const StrategyOptions& options);

// The indices of the `keep` updates with the lowest Krum scores (ties: the
// lower index first), from the n x n squared distances (row-major) and f.
// Requires n > 2f + 2 and 1 <= keep <= n.
std::vector<size_t> KrumSelect(const std::vector<double>& distances, size_t n,
                               int byzantine, int keep);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_KRUM_H_
