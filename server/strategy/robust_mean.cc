#include "server/strategy/robust_mean.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/strategy/stored_round.h"

namespace fedberry::server {
namespace {

class RobustMeanRound : public StoredRound {
 public:
  RobustMeanRound(std::shared_ptr<const runtime::NamedTensors> global,
                  std::unique_ptr<UpdateStore> store, bool median,
                  double trim_fraction)
      : StoredRound(std::move(global), std::move(store)),
        median_(median),
        trim_fraction_(trim_fraction) {}

  absl::StatusOr<runtime::NamedTensors> Result() override {
    const size_t n = weights_.size();
    if (n == 0)
      return absl::FailedPreconditionError("no update was aggregated");
    const size_t trim = static_cast<size_t>(
        std::floor(trim_fraction_ * static_cast<double>(n)));
    std::vector<float> next(static_cast<size_t>(store_->coordinates()));
    std::vector<float> column(n);
    absl::Status read = store_->ForEachBlock(
        [&](int64_t begin, int64_t count, const std::vector<float>& block) {
          for (int64_t j = 0; j < count; ++j) {
            for (size_t u = 0; u < n; ++u) column[u] = block[u * count + j];
            next[begin + j] = static_cast<float>(
                median_ ? Median(column) : TrimmedMean(column, trim));
          }
        });
    if (!read.ok()) return read;
    return Assemble(next);
  }

 private:
  bool median_;
  double trim_fraction_;
};

class RobustMean : public Strategy {
 public:
  explicit RobustMean(const StrategyOptions& o) : options_(o) {}
  const std::string& name() const override { return options_.name; }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    auto store = UpdateStore::Create(options_.spill_dir, *global);
    if (!store.ok()) return store.status();
    return std::make_unique<RobustMeanRound>(
        std::move(global), *std::move(store), options_.name == "median",
        options_.trim_fraction);
  }

 private:
  StrategyOptions options_;
};

}  // namespace

double Median(std::vector<float>& values) {
  const size_t n = values.size();
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), mid, values.end());
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  // The lower middle value is the largest of the lower half.
  const double lower = *std::max_element(values.begin(), mid);
  return 0.5 * (lower + upper);
}

double TrimmedMean(std::vector<float>& values, size_t trim) {
  const size_t n = values.size();
  auto lo = values.begin() + static_cast<std::ptrdiff_t>(trim);
  auto hi = values.end() - static_cast<std::ptrdiff_t>(trim);
  if (trim > 0) {
    std::nth_element(values.begin(), lo, values.end());
    std::nth_element(lo, hi - 1, values.end());
  }
  double sum = 0;
  for (auto it = lo; it != hi; ++it) sum += *it;
  return sum / static_cast<double>(n - 2 * trim);
}

absl::StatusOr<std::unique_ptr<Strategy>> MakeRobustMean(
    const StrategyOptions& options) {
  return std::unique_ptr<Strategy>(std::make_unique<RobustMean>(options));
}

}  // namespace fedberry::server
