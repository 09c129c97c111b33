#include "client/data_loan.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"

namespace fedberry::client {

absl::StatusOr<std::vector<int64_t>> LentRows(int64_t rows, uint64_t count,
                                              uint64_t seed) {
  if (rows < 0 || count > static_cast<uint64_t>(rows)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot hand over ", count, " samples: this board holds ", rows));
  }
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), int64_t{0});
  // A Fisher-Yates shuffle of our own (std::shuffle's sequence differs
  // between standard libraries; boards and servers may not share one).
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < count; ++i) {
    const size_t j = i + static_cast<size_t>(rng() % (order.size() - i));
    std::swap(order[i], order[j]);
  }
  order.resize(static_cast<size_t>(count));
  return order;
}

runtime::ImageDataset SelectRows(const runtime::ImageDataset& data,
                                 const std::vector<int64_t>& rows) {
  runtime::ImageDataset out;
  out.height = data.height;
  out.width = data.width;
  const size_t pixels = static_cast<size_t>(data.height * data.width);
  out.pixels.reserve(rows.size() * pixels);
  out.labels.reserve(rows.size());
  for (int64_t r : rows) {
    const auto first = data.pixels.begin() + static_cast<ptrdiff_t>(r * pixels);
    out.pixels.insert(out.pixels.end(), first,
                      first + static_cast<ptrdiff_t>(pixels));
    out.labels.push_back(data.labels[static_cast<size_t>(r)]);
  }
  out.rows = static_cast<int64_t>(rows.size());
  return out;
}

absl::StatusOr<runtime::ImageDataset> RoundDataset(
    const runtime::ImageDataset& own, const std::vector<int64_t>& lent,
    const std::vector<runtime::ImageDataset>& borrowed, int classes) {
  std::vector<bool> gone(static_cast<size_t>(own.rows), false);
  for (int64_t r : lent) {
    if (r < 0 || r >= own.rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "lent row ", r, " is outside this board's ", own.rows, " samples"));
    }
    gone[static_cast<size_t>(r)] = true;
  }
  std::vector<int64_t> kept;
  kept.reserve(static_cast<size_t>(own.rows));
  for (int64_t r = 0; r < own.rows; ++r) {
    if (!gone[static_cast<size_t>(r)]) kept.push_back(r);
  }
  runtime::ImageDataset out = SelectRows(own, kept);
  for (const runtime::ImageDataset& b : borrowed) {
    if (b.rows == 0) continue;
    if (b.height != own.height || b.width != own.width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "received samples are ", b.height, "x", b.width,
          " images; this board trains on ", own.height, "x", own.width));
    }
    for (uint8_t label : b.labels) {
      if (label >= classes) {
        return absl::InvalidArgumentError(
            absl::StrCat("received sample has label ", int{label},
                         "; the model has ", classes, " classes"));
      }
    }
    out.pixels.insert(out.pixels.end(), b.pixels.begin(), b.pixels.end());
    out.labels.insert(out.labels.end(), b.labels.begin(), b.labels.end());
    out.rows += b.rows;
  }
  return out;
}

}  // namespace fedberry::client
