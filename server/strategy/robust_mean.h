// Coordinate-wise robust means (Yin et al., "Byzantine-Robust Distributed
// Learning", ICML 2018): each coordinate of the next model is the median of
// that coordinate over the round's updates, or their mean once the
// floor(trim_fraction * n) smallest and largest values are dropped. Both are
// unweighted: a board's claimed sample count must not buy it influence.
// Updates wait in an UpdateStore; Result reads them a block of coordinates
// at a time. Cost: O(n * model) disk, O(n log n) per coordinate.
// Thread-safety: see strategy.h.
#ifndef FEDBERRY_SERVER_STRATEGY_ROBUST_MEAN_H_
#define FEDBERRY_SERVER_STRATEGY_ROBUST_MEAN_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// For options.name median or trimmed_mean (validated by the caller).
absl::StatusOr<std::unique_ptr<Strategy>> MakeRobustMean(
    const StrategyOptions& options);

// The median of `values` (the mean of the two middle ones for an even
// count), and the mean of what is left once `trim` values are dropped at
// each end. Both reorder `values`; `values` must not be empty and
// 2 * trim < size.
double Median(std::vector<float>& values);
double TrimmedMean(std::vector<float>& values, size_t trim);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_ROBUST_MEAN_H_
