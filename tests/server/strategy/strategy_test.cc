// Each aggregation strategy against results computed by hand on small
// tensors, its state across rounds and restarts, and its refusals.
#include "server/strategy/strategy.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "server/strategy/krum.h"
#include "server/strategy/robust_mean.h"
#include "server/strategy/update_store.h"
#include "tests/test_files.h"

namespace fedberry::server::strategy_test {
namespace {

using runtime::NamedTensors;

// A model of one 3-value weight, a 1-value bias (a parameter) and an
// integer buffer, like batch norm's num_batches_tracked.
NamedTensors Model(std::vector<float> w, float b, int64_t n = 0) {
  return {{"w", at::tensor(w)},
          {"b", at::tensor({b})},
          {"n", at::tensor({n}, at::kLong)}};
}

std::vector<float> Values(const at::Tensor& t) {
  at::Tensor c = t.to(at::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(),
                            c.data_ptr<float>() + c.numel());
}

struct Run {
  std::unique_ptr<Strategy> strategy;
  fedberry::testing::TempDir spill;
};

std::unique_ptr<Strategy> Make(StrategyOptions o, const NamedTensors& model,
                               const std::string& spill = "") {
  if (!spill.empty()) o.spill_dir = spill;
  auto s = MakeStrategy(o, model);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// Aggregates `updates` (weights 1, 2, 3, ...) from `global` in one round.
NamedTensors Round(Strategy& s, const NamedTensors& global,
                   const std::vector<NamedTensors>& updates,
                   std::vector<double> weights = {}, bool commit = true) {
  auto round = s.BeginRound(std::make_shared<const NamedTensors>(global));
  EXPECT_TRUE(round.ok()) << round.status();
  for (size_t i = 0; i < updates.size(); ++i) {
    const double w = i < weights.size() ? weights[i] : 1.0;
    EXPECT_TRUE((*round)->Add(updates[i], w).ok());
  }
  auto result = (*round)->Result();
  EXPECT_TRUE(result.ok()) << result.status();
  if (commit) s.Commit(**round);
  return result.ok() ? *result : NamedTensors{};
}

TEST(RobustMean, MedianAndTrimmedMeanByHand) {
  std::vector<float> odd = {5, 1, 4, 2, 3};
  EXPECT_EQ(Median(odd), 3);
  std::vector<float> even = {10, 1, 4, 2};
  EXPECT_EQ(Median(even), 3);  // (2 + 4) / 2
  std::vector<float> ties = {7, 7, 1, 7};
  EXPECT_EQ(Median(ties), 7);
  std::vector<float> one = {-2};
  EXPECT_EQ(Median(one), -2);

  std::vector<float> v = {100, 1, 2, 3, -50};
  EXPECT_DOUBLE_EQ(TrimmedMean(v, 0), 56.0 / 5);  // no trim: the mean
  v = {100, 1, 2, 3, -50};
  EXPECT_DOUBLE_EQ(TrimmedMean(v, 1), 2.0);  // drops 100 and -50
  v = {100, 1, 2, 3, -50};
  EXPECT_DOUBLE_EQ(TrimmedMean(v, 2), 2.0);  // the median is what is left
  v = {4, 4, 4, 0, 9, 9};
  EXPECT_DOUBLE_EQ(TrimmedMean(v, 1), 5.25);  // (4 + 4 + 4 + 9) / 4
}

TEST(RobustMean, CoordinateWiseAndUnweightedWithIntegersAveraged) {
  fedberry::testing::TempDir dir;
  const NamedTensors global = Model({0, 0, 0}, 0);
  const std::vector<NamedTensors> updates = {
      Model({1, 10, -1}, 5, 2), Model({2, 20, -2}, 6, 4),
      Model({3, 30, -3}, 7, 6), Model({1000, -1000, 1e6}, 8, 8)};
  StrategyOptions o;
  o.name = "median";
  auto median = Make(o, global, dir / "spill");
  // Weights do not count for the median; they do for the integer buffer.
  NamedTensors m = Round(*median, global, updates, {1, 1, 1, 100});
  EXPECT_EQ(Values(m[0].tensor), (std::vector<float>{2.5, 15, -1.5}));
  EXPECT_EQ(Values(m[1].tensor), (std::vector<float>{6.5}));
  EXPECT_EQ(m[2].tensor.scalar_type(), at::kLong);
  EXPECT_EQ(m[2].tensor.item<int64_t>(), 8);  // (2+4+6+800)/103 = 7.88

  o.name = "trimmed_mean";
  o.trim_fraction = 0.25;  // one of four at each end
  auto trimmed = Make(o, global, dir / "spill");
  NamedTensors t = Round(*trimmed, global, updates);
  EXPECT_EQ(Values(t[0].tensor), (std::vector<float>{2.5, 15, -1.5}));
  o.trim_fraction = 0;
  trimmed = Make(o, global, dir / "spill");
  t = Round(*trimmed, global, {updates[0], updates[1], updates[2]});
  EXPECT_EQ(Values(t[0].tensor), (std::vector<float>{2, 20, -2}));
  // The store is unlinked: nothing is left in the spill folder.
  EXPECT_TRUE(std::filesystem::is_empty(dir / "spill"));
}

TEST(Krum, SelectionByHand) {
  // Four points on a line at 0, 1, 2 and 10; f = 0, so each is scored by
  // its n - 2 = 2 nearest: 0: 1 + 4 = 5, 1: 1 + 1 = 2, 2: 1 + 4 = 5,
  // 10: 64 + 81 = 145.
  const std::vector<float> x = {0, 1, 2, 10};
  std::vector<double> d(16);
  for (size_t a = 0; a < 4; ++a) {
    for (size_t b = 0; b < 4; ++b) d[a * 4 + b] = (x[a] - x[b]) * (x[a] - x[b]);
  }
  EXPECT_EQ(KrumSelect(d, 4, 0, 1), (std::vector<size_t>{1}));
  // A tie between 0 and 2 goes to the lower index.
  EXPECT_EQ(KrumSelect(d, 4, 0, 3), (std::vector<size_t>{1, 0, 2}));
}

TEST(Krum, KeepsTheHonestClusterAgainstAnOutlier) {
  fedberry::testing::TempDir dir;
  const NamedTensors global = Model({0, 0, 0}, 0);
  std::vector<NamedTensors> updates = {
      Model({1, 1, 1}, 1), Model({1.1f, 1, 1}, 1), Model({0.9f, 1, 1}, 1),
      Model({1, 1.1f, 1}, 1), Model({-100, 100, -100}, 50)};
  StrategyOptions o;
  o.name = "krum";
  o.byzantine = 1;  // n = 5 > 2f + 2 = 4
  auto krum = Make(o, global, dir / "spill");
  NamedTensors k = Round(*krum, global, updates);
  // Update 0 is the centre of the honest four.
  EXPECT_EQ(Values(k[0].tensor), (std::vector<float>{1, 1, 1}));

  o.name = "multikrum";
  o.krum_keep = 2;
  auto multi = Make(o, global, dir / "spill");
  // Updates 0 and then 1 or 3 score lowest; weighted 1:3 in sample counts.
  NamedTensors m = Round(*multi, global, updates, {1, 3, 1, 1, 1});
  const std::vector<float> w = Values(m[0].tensor);
  EXPECT_NEAR(w[0], (1 * 1 + 3 * 1.1) / 4, 1e-6);
  EXPECT_NEAR(w[1], 1, 1e-6);

  // Too few updates for f = 1: refused, saying how many it needs.
  auto round = krum->BeginRound(std::make_shared<const NamedTensors>(global));
  ASSERT_TRUE(round.ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*round)->Add(updates[i], 1).ok());
  auto few = (*round)->Result();
  EXPECT_EQ(few.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(few.status().message().find("at least 5"), std::string::npos)
      << few.status();
}

// One coordinate of a server optimizer by hand, with Adam's bias correction.
struct HandOptimizer {
  std::string rule;
  double lr, beta1, beta2, tau;
  double m = 0, v = 0;
  int t = 0;
  double Step(double d) {  // the change of x for pseudo-gradient d
    ++t;
    m = beta1 * m + (1 - beta1) * d;
    if (rule == "fedadam") v = beta2 * v + (1 - beta2) * d * d;
    if (rule == "fedyogi") {
      v = v - (1 - beta2) * d * d *
                  (v - d * d > 0   ? 1
                   : v - d * d < 0 ? -1
                                   : 0);
    }
    if (rule == "fedadagrad") v = v + d * d;
    const double mh = m / (1 - std::pow(beta1, t));
    const double vh = rule == "fedadagrad" ? v : v / (1 - std::pow(beta2, t));
    return lr * mh / (std::sqrt(vh) + tau);
  }
};

TEST(ServerOptimizer, FedAdamStepsByHandAndCommitsOnlyPublishedRounds) {
  const NamedTensors global = Model({1, 1, 1}, 0, 4);
  StrategyOptions o;
  o.name = "fedadam";
  o.server_lr = 0.1;
  o.beta1 = 0.9;
  o.beta2 = 0.99;
  o.tau = 0.01;
  o.parameter_count = 2;  // w and b are parameters
  auto adam = Make(o, global);
  // The weighted mean is {2, 1, 0}, b 0.5, n 6: d = {1, 0, -1}, 0.5.
  const std::vector<NamedTensors> updates = {Model({2, 1, 0}, 0.5, 6)};
  NamedTensors first = Round(*adam, global, updates, {1}, /*commit=*/false);
  std::vector<HandOptimizer> hand(4, {"fedadam", 0.1, 0.9, 0.99, 0.01});
  const std::vector<double> d = {1, 0, -1, 0.5};
  std::vector<float> w = Values(first[0].tensor);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(w[i], 1 + hand[i].Step(d[i]), 1e-6);
  EXPECT_NEAR(Values(first[1].tensor)[0], hand[3].Step(d[3]), 1e-6);
  EXPECT_EQ(first[2].tensor.item<int64_t>(), 6);  // a buffer: the mean

  // Not committed (the server refused that result): the same round again
  // gives the same step, from the same moments.
  NamedTensors again = Round(*adam, global, updates);
  EXPECT_TRUE(again[0].tensor.equal(first[0].tensor));
  // Committed now: the next step uses the moments it left.
  NamedTensors second = Round(*adam, again, {Model({2, 1, 0}, 0.5, 6)});
  const float x0 = Values(again[0].tensor)[0];
  EXPECT_NEAR(Values(second[0].tensor)[0], x0 + hand[0].Step(2 - x0), 1e-5);
}

TEST(ServerOptimizer, YogiAndAdagradOverTwoRounds) {
  for (const char* name : {"fedyogi", "fedadagrad", "fedadam"}) {
    SCOPED_TRACE(name);
    StrategyOptions o;
    o.name = name;
    o.server_lr = 1;
    o.beta1 = 0.5;
    o.beta2 = 0.75;
    o.tau = 0.5;
    NamedTensors x = Model({0, 0, 0}, 0);
    auto s = Make(o, x);
    HandOptimizer hand{name, 1, 0.5, 0.75, 0.5};
    double expected = 0;
    for (float target : {2.0f, -1.0f}) {
      const double d = target - expected;
      expected += hand.Step(d);
      x = Round(*s, x, {Model({target, 0, 0}, 0)});
      EXPECT_NEAR(Values(x[0].tensor)[0], expected, 1e-5);
      EXPECT_EQ(Values(x[0].tensor)[1], 0);
    }
  }
}

TEST(ServerOptimizer, StateRestoresIntoANewStrategyExactly) {
  const NamedTensors global = Model({1, 2, 3}, 0);
  StrategyOptions o;
  o.name = "fedadam";
  auto a = Make(o, global);
  NamedTensors g1 = Round(*a, global, {Model({1.5, 2, 2}, 1)});
  const NamedTensors state = a->State();
  ASSERT_EQ(state.size(), 5u);  // m and v of w and b, the step count
  EXPECT_EQ(state[0].name, "m/w");
  EXPECT_EQ(state[3].name, "v/b");
  EXPECT_EQ(state[4].name, "steps");
  EXPECT_EQ(state[4].tensor.item<int64_t>(), 1);

  auto b = Make(o, global);  // a restarted server
  ASSERT_TRUE(b->Restore(state).ok());
  NamedTensors from_a = Round(*a, g1, {Model({2, 2, 1}, 2)});
  NamedTensors from_b = Round(*b, g1, {Model({2, 2, 1}, 2)});
  for (size_t i = 0; i < from_a.size(); ++i) {
    EXPECT_TRUE(from_a[i].tensor.equal(from_b[i].tensor)) << from_a[i].name;
  }
  // A state of another shape, or any state for a stateless strategy, is
  // refused.
  NamedTensors wrong = state;
  wrong[0].tensor = at::zeros({4});
  EXPECT_EQ(b->Restore(wrong).code(), absl::StatusCode::kInvalidArgument);
  wrong = state;
  wrong.pop_back();
  EXPECT_EQ(b->Restore(wrong).code(), absl::StatusCode::kInvalidArgument);
  StrategyOptions avg;
  EXPECT_EQ(Make(avg, global)->Restore(state).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StrategyOptions, ImpossibleSettingsAreRefusedWithWhatToChange) {
  auto refused = [](StrategyOptions o, int min_updates, const char* words) {
    absl::Status s = ValidateStrategyOptions(o, min_updates);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << o.name;
    EXPECT_NE(s.message().find(words), std::string::npos)
        << s.message() << " does not say " << words;
  };
  StrategyOptions o;
  EXPECT_TRUE(ValidateStrategyOptions(o, 1).ok());
  o.name = "fedsgd";
  refused(o, 4, "unknown strategy 'fedsgd'");
  o.name = "fedprox";
  refused(o, 4, "--proximal_mu > 0");
  o.proximal_mu = 0.01;
  EXPECT_TRUE(ValidateStrategyOptions(o, 1).ok());
  o.name = "fedavg";
  refused(o, 4, "--proximal_mu is for --strategy=fedprox");
  o = {};
  o.name = "fedadam";
  o.tau = 0;
  refused(o, 4, "--tau > 0");
  o = {};
  o.name = "trimmed_mean";
  o.trim_fraction = 0.5;
  refused(o, 4, "0 <= --trim_fraction < 0.5");
  o = {};
  o.name = "krum";
  o.byzantine = 1;
  refused(o, 4, "needs n > 2f + 2, so at least 5 updates");
  EXPECT_TRUE(ValidateStrategyOptions(o, 5).ok());
  o.name = "multikrum";
  o.krum_keep = 5;
  refused(o, 5, "--krum_keep <= n - f");
  o.krum_keep = 4;
  EXPECT_TRUE(ValidateStrategyOptions(o, 5).ok());
}

TEST(UpdateStore, BlocksCoverEveryCoordinateOfEveryUpdate) {
  fedberry::testing::TempDir dir;
  const NamedTensors layout = Model({0, 0, 0}, 0);
  // A buffer of 8 floats: blocks of 2 coordinates for 3 updates.
  auto store = UpdateStore::Create(dir / "s", layout, 8 * sizeof(float));
  ASSERT_TRUE(store.ok()) << store.status();
  for (int u = 0; u < 3; ++u) {
    const float b = 10.0f * u;
    ASSERT_TRUE((*store)->Append(Model({b + 1, b + 2, b + 3}, b + 4)).ok());
  }
  EXPECT_EQ((*store)->coordinates(), 4);
  std::vector<float> seen(12, -1);
  int blocks = 0;
  ASSERT_TRUE((*store)
                  ->ForEachBlock([&](int64_t begin, int64_t count,
                                     const std::vector<float>& block) {
                    ++blocks;
                    for (int u = 0; u < 3; ++u) {
                      for (int64_t j = 0; j < count; ++j) {
                        seen[u * 4 + begin + j] = block[u * count + j];
                      }
                    }
                  })
                  .ok());
  EXPECT_EQ(blocks, 2);
  EXPECT_EQ(seen,
            (std::vector<float>{1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24}));
  auto row = (*store)->Row(1);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(*row, (std::vector<float>{11, 12, 13, 14}));
}

}  // namespace
}  // namespace fedberry::server::strategy_test
