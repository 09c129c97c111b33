#include "runtime/partition.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {
namespace {

// std::shuffle's algorithm is unspecified; a hand-rolled Fisher-Yates keeps
// the split identical across standard libraries (x86-64 server, aarch64 Pi).
template <typename T>
void Shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(rng() % i);
    std::swap(v[i - 1], v[j]);
  }
}

// Uniform double in [0, 1) from 53 random bits (portable, unlike
// std::uniform_real_distribution).
double Uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

// Marsaglia-Tsang gamma sampler, portable for the same reason as Shuffle.
double Gamma(double alpha, std::mt19937_64& rng) {
  if (alpha < 1.0) {
    double u = Uniform(rng);
    return Gamma(alpha + 1.0, rng) * std::pow(std::max(u, 1e-300), 1.0 / alpha);
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x, v;
    do {
      // Box-Muller normal.
      double u1 = std::max(Uniform(rng), 1e-300), u2 = Uniform(rng);
      x = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = Uniform(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(std::max(u, 1e-300)) <
        0.5 * x * x + d * (1.0 - v + std::log(v)))
      return d * v;
  }
}

absl::Status Validate(size_t rows, const PartitionSpec& spec) {
  if (spec.count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("partition count must be at least 1, got ", spec.count));
  }
  if (spec.index < 0 || spec.index >= spec.count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "partition index ", spec.index, " is outside 0..", spec.count - 1));
  }
  if (static_cast<size_t>(spec.count) > rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot split ", rows, " rows into ", spec.count, " partitions"));
  }
  if (spec.kind == PartitionSpec::Kind::kDirichlet && !(spec.alpha > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dirichlet alpha must be > 0, got ", spec.alpha));
  }
  return absl::OkStatus();
}

std::vector<std::vector<int64_t>> SplitIid(size_t rows, int count,
                                           std::mt19937_64& rng) {
  std::vector<int64_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  Shuffle(order, rng);
  std::vector<std::vector<int64_t>> shards(count);
  for (int c = 0; c < count; ++c) {
    size_t begin = rows * c / count, end = rows * (c + 1) / count;
    shards[c].assign(order.begin() + begin, order.begin() + end);
  }
  return shards;
}

std::vector<std::vector<int64_t>> SplitDirichlet(
    const std::vector<uint8_t>& labels, int count, double alpha,
    std::mt19937_64& rng) {
  std::map<uint8_t, std::vector<int64_t>> by_class;
  for (size_t i = 0; i < labels.size(); ++i) by_class[labels[i]].push_back(i);
  std::vector<std::vector<int64_t>> shards(count);
  for (auto& [label, rows] : by_class) {
    Shuffle(rows, rng);
    std::vector<double> p(count);
    double sum = 0;
    for (double& x : p) sum += (x = Gamma(alpha, rng));
    // Cut the class's rows at the cumulative proportions.
    double acc = 0;
    size_t begin = 0;
    for (int c = 0; c < count; ++c) {
      acc += p[c] / sum;
      size_t end = c + 1 == count
                       ? rows.size()
                       : std::min(rows.size(),
                                  static_cast<size_t>(acc * rows.size() + 0.5));
      end = std::max(end, begin);
      shards[c].insert(shards[c].end(), rows.begin() + begin,
                       rows.begin() + end);
      begin = end;
    }
  }
  // A shard left empty by a very skewed draw takes one row from the largest,
  // so every client has something to train on.
  for (auto& shard : shards) {
    if (!shard.empty()) continue;
    auto largest = std::max_element(
        shards.begin(), shards.end(),
        [](const auto& a, const auto& b) { return a.size() < b.size(); });
    shard.push_back(largest->back());
    largest->pop_back();
  }
  return shards;
}

}  // namespace

absl::StatusOr<PartitionSpec::Kind> ParsePartitionKind(const std::string& s) {
  if (s == "iid") return PartitionSpec::Kind::kIid;
  if (s == "dirichlet") return PartitionSpec::Kind::kDirichlet;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown partition kind '", s, "' (expected iid or dirichlet)"));
}

const char* PartitionKindName(PartitionSpec::Kind kind) {
  return kind == PartitionSpec::Kind::kDirichlet ? "dirichlet" : "iid";
}

absl::StatusOr<std::vector<std::vector<int64_t>>> PartitionAll(
    const std::vector<uint8_t>& labels, const PartitionSpec& spec) {
  if (absl::Status s = Validate(labels.size(), spec); !s.ok()) return s;
  std::mt19937_64 rng(spec.seed);
  auto shards = spec.kind == PartitionSpec::Kind::kIid
                    ? SplitIid(labels.size(), spec.count, rng)
                    : SplitDirichlet(labels, spec.count, spec.alpha, rng);
  for (auto& shard : shards) std::sort(shard.begin(), shard.end());
  return shards;
}

absl::StatusOr<std::vector<int64_t>> PartitionRows(
    const std::vector<uint8_t>& labels, const PartitionSpec& spec) {
  auto all = PartitionAll(labels, spec);
  if (!all.ok()) return all.status();
  return std::move((*all)[spec.index]);
}

}  // namespace fedberry::runtime
