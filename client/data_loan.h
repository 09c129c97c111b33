// Which samples a board trains on in a round with data moves (the opt-in
// mode for trusted clusters): its own samples less those it handed over,
// plus those it received. A board hands over the first `count` samples of
// a seeded order, so the same round always lends the same samples (a
// restarted board resumes on the same data) and lending fewer is a prefix
// of lending more. No LibTorch here.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_DATA_LOAN_H_
#define FEDBERRY_CLIENT_DATA_LOAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/image_dataset.h"

namespace fedberry::client {

// The rows (of `rows`) lent first to last: the first `count` of a
// permutation drawn from `seed`. InvalidArgument when count > rows.
absl::StatusOr<std::vector<int64_t>> LentRows(int64_t rows, uint64_t count,
                                              uint64_t seed);

// The samples of `rows`, in that order.
runtime::ImageDataset SelectRows(const runtime::ImageDataset& data,
                                 const std::vector<int64_t>& rows);

// `own` without the rows in `lent`, then every sample of `borrowed`.
// InvalidArgument when a lent row is out of range, a borrowed image shape
// differs from `own`'s, or a borrowed label is not below `classes`.
absl::StatusOr<runtime::ImageDataset> RoundDataset(
    const runtime::ImageDataset& own, const std::vector<int64_t>& lent,
    const std::vector<runtime::ImageDataset>& borrowed, int classes);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_DATA_LOAN_H_
