// A board's data cut in two for evaluation on the boards: the share it holds
// out (never trained on; models are evaluated on it) and the rest it trains
// on. Which rows are held out is a function of their positions and the
// job's seed only, so a restarted board, or the same board in a later job
// with the same seed, holds out the same rows.
// Thread-safety: pure functions; the views are immutable like any Dataset.
#ifndef FEDBERRY_RUNTIME_HOLDOUT_H_
#define FEDBERRY_RUNTIME_HOLDOUT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/dataset.h"

namespace fedberry::runtime {

// The rows of a data set of `size` rows to hold out: round(fraction * size)
// of them, at least 1 and at most size - 1 (for size >= 2), ascending.
// InvalidArgument for a fraction outside (0, 1) or fewer than 2 rows.
absl::StatusOr<std::vector<int64_t>> HoldoutRows(int64_t size, double fraction,
                                                 uint64_t seed);

struct HoldoutSplit {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> holdout;
};

// Splits `data` per HoldoutRows. Both views share `data`.
absl::StatusOr<HoldoutSplit> SplitHoldout(std::shared_ptr<const Dataset> data,
                                          double fraction, uint64_t seed);

// The rows `rows` (each in [0, data->size())) of `data`, in that order.
std::unique_ptr<Dataset> MakeRowSubset(std::shared_ptr<const Dataset> data,
                                       std::vector<int64_t> rows);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_HOLDOUT_H_
