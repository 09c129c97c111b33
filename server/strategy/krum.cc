#include "server/strategy/krum.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "server/strategy/stored_round.h"

namespace fedberry::server {
namespace {

class KrumRound : public StoredRound {
 public:
  KrumRound(std::shared_ptr<const runtime::NamedTensors> global,
            std::unique_ptr<UpdateStore> store, int byzantine, int keep)
      : StoredRound(std::move(global), std::move(store)),
        byzantine_(byzantine),
        keep_(keep) {}

  absl::StatusOr<runtime::NamedTensors> Result() override {
    const size_t n = weights_.size();
    const size_t needed = 2 * static_cast<size_t>(byzantine_) + 3;
    if (n < needed || static_cast<size_t>(keep_) > n) {
      return absl::FailedPreconditionError(
          absl::StrCat("krum with f = ", byzantine_, " needs at least ",
                       std::max(needed, static_cast<size_t>(keep_)),
                       " updates; the round has ", n));
    }
    std::vector<double> d(n * n, 0.0);
    absl::Status read = store_->ForEachBlock(
        [&](int64_t, int64_t count, const std::vector<float>& block) {
          for (size_t a = 0; a < n; ++a) {
            const float* x = block.data() + a * count;
            for (size_t b = a + 1; b < n; ++b) {
              const float* y = block.data() + b * count;
              double s = 0;
              for (int64_t j = 0; j < count; ++j) {
                const double diff = static_cast<double>(x[j]) - y[j];
                s += diff * diff;
              }
              d[a * n + b] += s;
              d[b * n + a] += s;
            }
          }
        });
    if (!read.ok()) return read;
    const std::vector<size_t> chosen = KrumSelect(d, n, byzantine_, keep_);
    // The weighted mean of the chosen updates, in float64.
    std::vector<double> sum(static_cast<size_t>(store_->coordinates()), 0.0);
    double total = 0;
    for (size_t u : chosen) {
      absl::StatusOr<std::vector<float>> row = store_->Row(u);
      if (!row.ok()) return row.status();
      for (size_t j = 0; j < sum.size(); ++j) sum[j] += weights_[u] * (*row)[j];
      total += weights_[u];
    }
    std::vector<float> next(sum.size());
    for (size_t j = 0; j < sum.size(); ++j) {
      next[j] = static_cast<float>(sum[j] / total);
    }
    return Assemble(next);
  }

 private:
  int byzantine_;
  int keep_;
};

class Krum : public Strategy {
 public:
  explicit Krum(const StrategyOptions& o) : options_(o) {}
  const std::string& name() const override { return options_.name; }
  int MinUpdates() const override { return 2 * options_.byzantine + 3; }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    auto store = UpdateStore::Create(options_.spill_dir, *global);
    if (!store.ok()) return store.status();
    return std::make_unique<KrumRound>(
        std::move(global), *std::move(store), options_.byzantine,
        options_.name == "multikrum" ? options_.krum_keep : 1);
  }

 private:
  StrategyOptions options_;
};

}  // namespace

std::vector<size_t> KrumSelect(const std::vector<double>& distances, size_t n,
                               int byzantine, int keep) {
  const size_t neighbours = n - static_cast<size_t>(byzantine) - 2;
  std::vector<double> scores(n);
  std::vector<double> row;
  for (size_t a = 0; a < n; ++a) {
    row.clear();
    for (size_t b = 0; b < n; ++b) {
      if (b != a) row.push_back(distances[a * n + b]);
    }
    std::partial_sort(row.begin(), row.begin() + neighbours, row.end());
    scores[a] = std::accumulate(row.begin(), row.begin() + neighbours, 0.0);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  order.resize(static_cast<size_t>(keep));
  return order;
}

absl::StatusOr<std::unique_ptr<Strategy>> MakeKrum(
    const StrategyOptions& options) {
  return std::unique_ptr<Strategy>(std::make_unique<Krum>(options));
}

}  // namespace fedberry::server
