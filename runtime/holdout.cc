#include "runtime/holdout.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {
namespace {

// SplitMix64's finaliser: a row's rank depends on its position and the
// seed only, whatever the platform's standard library.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class RowSubset final : public Dataset {
 public:
  RowSubset(std::shared_ptr<const Dataset> data, std::vector<int64_t> rows)
      : data_(std::move(data)), rows_(std::move(rows)) {}

  int64_t size() const override { return static_cast<int64_t>(rows_.size()); }
  const std::vector<int64_t>& sample_shape() const override {
    return data_->sample_shape();
  }
  int64_t label_count() const override { return data_->label_count(); }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    std::vector<int64_t> mapped(rows, rows + n);
    for (int64_t& r : mapped) r = rows_[static_cast<size_t>(r)];
    data_->Read(mapped.data(), n, inputs, labels);
  }
  std::string Describe() const override {
    return absl::StrCat(rows_.size(), " rows of ", data_->Describe());
  }

 private:
  const std::shared_ptr<const Dataset> data_;
  const std::vector<int64_t> rows_;
};

}  // namespace

absl::StatusOr<std::vector<int64_t>> HoldoutRows(int64_t size, double fraction,
                                                 uint64_t seed) {
  if (!(fraction > 0 && fraction < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the held-out share must be in (0, 1), not ", fraction));
  }
  if (size < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot hold out a share of ", size,
        " sample(s): a board needs at least 2 to train on some and evaluate "
        "on others"));
  }
  const int64_t held = std::clamp<int64_t>(
      std::llround(fraction * static_cast<double>(size)), 1, size - 1);
  std::vector<std::pair<uint64_t, int64_t>> ranked(static_cast<size_t>(size));
  const uint64_t salt = Mix(seed);
  for (int64_t i = 0; i < size; ++i) {
    ranked[static_cast<size_t>(i)] = {Mix(salt ^ static_cast<uint64_t>(i)), i};
  }
  std::nth_element(ranked.begin(), ranked.begin() + held, ranked.end());
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(held));
  for (int64_t i = 0; i < held; ++i) {
    rows.push_back(ranked[static_cast<size_t>(i)].second);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

absl::StatusOr<HoldoutSplit> SplitHoldout(std::shared_ptr<const Dataset> data,
                                          double fraction, uint64_t seed) {
  absl::StatusOr<std::vector<int64_t>> held =
      HoldoutRows(data->size(), fraction, seed);
  if (!held.ok()) return held.status();
  std::vector<int64_t> kept;
  kept.reserve(static_cast<size_t>(data->size()) - held->size());
  size_t next = 0;
  for (int64_t i = 0; i < data->size(); ++i) {
    if (next < held->size() && (*held)[next] == i) {
      ++next;
    } else {
      kept.push_back(i);
    }
  }
  HoldoutSplit split;
  split.train = MakeRowSubset(data, std::move(kept));
  split.holdout = MakeRowSubset(std::move(data), *std::move(held));
  return split;
}

std::unique_ptr<Dataset> MakeRowSubset(std::shared_ptr<const Dataset> data,
                                       std::vector<int64_t> rows) {
  return std::make_unique<RowSubset>(std::move(data), std::move(rows));
}

}  // namespace fedberry::runtime
