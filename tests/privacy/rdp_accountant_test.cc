// The accountant a server holds: composition, the look-ahead a target
// epsilon needs, checkpoint state in and out, refusals; and the noise
// multiplier for a target epsilon.
#include "privacy/rdp_accountant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "tests/privacy/tf_privacy_orders.h"

namespace fedberry::privacy::rdp_accountant_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double EpsilonOf(const RdpAccountant& accountant, double delta) {
  absl::StatusOr<PrivacySpent> spent = accountant.Spent(delta);
  EXPECT_TRUE(spent.ok()) << spent.status();
  return spent.ok() ? spent->epsilon : -1;
}

void ExpectInvalidArgument(const absl::Status& status,
                           const std::string& message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), message))
      << status << " does not say " << message;
}

TEST(RdpAccountantTest, StartsWithNothingSpent) {
  RdpAccountant accountant;
  EXPECT_EQ(accountant.orders(), DefaultOrders());
  EXPECT_EQ(accountant.rdp(), std::vector<double>(DefaultOrders().size(), 0));
  EXPECT_EQ(accountant.steps(), 0);
  EXPECT_EQ(EpsilonOf(accountant, 1e-5), 0);
}

TEST(RdpAccountantTest, RoundsOfDifferentRatesAndNoiseAdd) {
  const std::vector<double> orders = DefaultOrders();
  RdpAccountant accountant;
  ASSERT_TRUE(accountant.Compose(0.1, 1.1).ok());
  ASSERT_TRUE(accountant.Compose(0.05, 0.8, 3).ok());
  const std::vector<double> first = SubsampledGaussianRdp(0.1, 1.1, orders);
  const std::vector<double> second = SubsampledGaussianRdp(0.05, 0.8, orders);
  ASSERT_EQ(accountant.rdp().size(), orders.size());
  for (size_t i = 0; i < orders.size(); ++i) {
    EXPECT_DOUBLE_EQ(accountant.rdp()[i], first[i] + 3 * second[i])
        << orders[i];
  }
  EXPECT_EQ(accountant.steps(), 4);
  // Composition only grows the budget.
  RdpAccountant first_only;
  ASSERT_TRUE(first_only.Compose(0.1, 1.1).ok());
  EXPECT_GT(EpsilonOf(accountant, 1e-5), EpsilonOf(first_only, 1e-5));
}

// [TF Privacy, old] rdp_accountant_test.py
// test_compute_heterogeneous_rdp_different_sampling_probabilities: a round
// at q = 0 adds nothing to one at q = 1 (z = 10, order 20: 0.1).
TEST(RdpAccountantTest, HeterogeneousRoundsAsTfPrivacy) {
  RdpAccountant accountant({20});
  ASSERT_TRUE(accountant.Compose(0, 10).ok());
  ASSERT_TRUE(accountant.Compose(1, 10).ok());
  EXPECT_EQ(accountant.rdp(), std::vector<double>{0.1});
  EXPECT_EQ(accountant.steps(), 2);
}

TEST(RdpAccountantTest, ManyStepsAtOnceEqualOneAtATime) {
  RdpAccountant at_once;
  RdpAccountant one_by_one;
  ASSERT_TRUE(at_once.Compose(0.02, 1.3, 5).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(one_by_one.Compose(0.02, 1.3).ok());
  for (size_t i = 0; i < at_once.rdp().size(); ++i) {
    EXPECT_NEAR(at_once.rdp()[i], one_by_one.rdp()[i],
                1e-12 * at_once.rdp()[i]);
  }
  EXPECT_NEAR(EpsilonOf(at_once, 1e-5), EpsilonOf(one_by_one, 1e-5), 1e-12);
}

TEST(RdpAccountantTest, SpentAfterIsSpentAfterComposeWithoutComposing) {
  RdpAccountant accountant;
  ASSERT_TRUE(accountant.Compose(0.1, 1.0, 10).ok());
  const std::vector<double> before = accountant.rdp();
  for (const auto& [q, z] : std::vector<std::pair<double, double>>{
           {0.1, 1.0}, {0.3, 0.7}, {0, 1}, {1, 5}, {0.1, 0}}) {
    SCOPED_TRACE(testing::Message() << q << " " << z);
    absl::StatusOr<PrivacySpent> ahead = accountant.SpentAfter(q, z, 1e-5);
    ASSERT_TRUE(ahead.ok()) << ahead.status();
    EXPECT_EQ(accountant.rdp(), before);
    EXPECT_EQ(accountant.steps(), 10);
    RdpAccountant composed = accountant;
    ASSERT_TRUE(composed.Compose(q, z).ok());
    absl::StatusOr<PrivacySpent> spent = composed.Spent(1e-5);
    ASSERT_TRUE(spent.ok()) << spent.status();
    EXPECT_EQ(ahead->epsilon, spent->epsilon);
    EXPECT_EQ(ahead->order, spent->order);
  }
}

TEST(RdpAccountantTest, NoNoiseSpendsEverythingAndRestoresSo) {
  RdpAccountant accountant;
  ASSERT_TRUE(accountant.Compose(0.1, 0).ok());
  EXPECT_EQ(EpsilonOf(accountant, 1e-5), kInf);
  RdpAccountant restored;
  ASSERT_TRUE(
      restored
          .Restore(accountant.orders(), accountant.rdp(), accountant.steps())
          .ok());
  EXPECT_EQ(EpsilonOf(restored, 1e-5), kInf);
}

TEST(RdpAccountantTest, RestoreRoundTripsAndContinuesAsTheOriginal) {
  RdpAccountant original;
  ASSERT_TRUE(original.Compose(0.1, 1.1, 7).ok());
  RdpAccountant restored;
  ASSERT_TRUE(
      restored.Restore(original.orders(), original.rdp(), original.steps())
          .ok());
  EXPECT_EQ(restored.rdp(), original.rdp());
  EXPECT_EQ(restored.steps(), 7);
  ASSERT_TRUE(original.Compose(0.2, 0.9).ok());
  ASSERT_TRUE(restored.Compose(0.2, 0.9).ok());
  EXPECT_EQ(restored.rdp(), original.rdp());
  EXPECT_EQ(EpsilonOf(restored, 1e-6), EpsilonOf(original, 1e-6));
  // The two-argument form checks sizes only.
  RdpAccountant by_values;
  ASSERT_TRUE(by_values.Restore(original.rdp(), original.steps()).ok());
  EXPECT_EQ(by_values.rdp(), original.rdp());
}

TEST(RdpAccountantTest, RestoreRefusesBadStateNamingWhatAndKeepsItsOwn) {
  RdpAccountant accountant({2, 4, 8});
  ASSERT_TRUE(accountant.Compose(0.1, 1, 2).ok());
  const std::vector<double> kept = accountant.rdp();
  const std::vector<double> orders = {2, 4, 8};
  ExpectInvalidArgument(accountant.Restore({0.1, 0.2}, 3),
                        "has 2 RDP values; this one has 3 orders");
  ExpectInvalidArgument(accountant.Restore({0.1, std::nan(""), 0.3}, 3),
                        "order 4 (index 1) is nan");
  ExpectInvalidArgument(accountant.Restore({0.1, 0.2, -0.3}, 3),
                        "order 8 (index 2) is -0.3");
  ExpectInvalidArgument(accountant.Restore({0.1, 0.2, 0.3}, -1), "steps is -1");
  ExpectInvalidArgument(accountant.Restore({0, 0.2, 0}, 0),
                        "order 4 (index 1) is 0.2 but the saved steps is 0");
  ExpectInvalidArgument(accountant.Restore({2, 4}, {0.1, 0.2}, 3),
                        "has 2 orders; this one has 3");
  ExpectInvalidArgument(accountant.Restore({2, 4.5, 8}, {0.1, 0.2, 0.3}, 3),
                        "order at index 1 is 4.5; this one's is 4");
  EXPECT_EQ(accountant.rdp(), kept);
  EXPECT_EQ(accountant.steps(), 2);
  EXPECT_TRUE(accountant.Restore(orders, {0, 0, 0}, 0).ok());
}

TEST(RdpAccountantTest, ComposeRefusesBadArgumentsAndKeepsItsState) {
  RdpAccountant accountant;
  ASSERT_TRUE(accountant.Compose(0.1, 1).ok());
  const std::vector<double> kept = accountant.rdp();
  ExpectInvalidArgument(accountant.Compose(-0.1, 1), "sampling rate");
  ExpectInvalidArgument(accountant.Compose(1.1, 1), "sampling rate");
  ExpectInvalidArgument(accountant.Compose(std::nan(""), 1), "sampling rate");
  ExpectInvalidArgument(accountant.Compose(0.1, -1), "noise multiplier");
  ExpectInvalidArgument(accountant.Compose(0.1, std::nan("")),
                        "noise multiplier");
  ExpectInvalidArgument(accountant.Compose(0.1, kInf), "noise multiplier");
  ExpectInvalidArgument(accountant.Compose(0.1, 1, -1), "steps must be >= 0");
  ExpectInvalidArgument(
      accountant.Compose(0.1, 1, std::numeric_limits<int64_t>::max()),
      "overflows");
  EXPECT_EQ(accountant.rdp(), kept);
  EXPECT_EQ(accountant.steps(), 1);
  ASSERT_TRUE(accountant.Compose(0.1, 1, 0).ok());
  EXPECT_EQ(accountant.steps(), 1);

  ExpectInvalidArgument(accountant.Spent(0).status(), "delta");
  ExpectInvalidArgument(accountant.Spent(1).status(), "delta");
  ExpectInvalidArgument(accountant.SpentAfter(2, 1, 1e-5).status(),
                        "sampling rate");
  RdpAccountant bad_grid({1.0, 2.0});
  ExpectInvalidArgument(bad_grid.Compose(0.1, 1), "order 1 (index 0)");
  ExpectInvalidArgument(bad_grid.Spent(1e-5).status(), "order 1 (index 0)");
  ExpectInvalidArgument(RdpAccountant(std::vector<double>{}).Compose(0.1, 1),
                        "no Rényi orders");
}

// The answer keeps the target; 1e-4 less noise (the search's resolution)
// does not.
TEST(NoiseMultiplierForTest, IsTheSmallestWithinTheTarget) {
  struct Case {
    double q;
    int64_t steps;
    double delta, target;
  };
  for (const Case& c : std::vector<Case>{{0.1, 50, 1e-5, 2.0},
                                         {0.01, 1000, 1e-6, 1.0},
                                         {1.0, 10, 1e-5, 8.0},
                                         {0.5, 3, 1e-3, 0.5},
                                         {0.001, 100000, 1e-7, 3.0}}) {
    SCOPED_TRACE(testing::Message() << "q=" << c.q << " steps=" << c.steps
                                    << " target=" << c.target);
    absl::StatusOr<double> z =
        NoiseMultiplierFor(c.q, c.steps, c.delta, c.target);
    ASSERT_TRUE(z.ok()) << z.status();
    RdpAccountant at_z;
    ASSERT_TRUE(at_z.Compose(c.q, *z, c.steps).ok());
    EXPECT_LE(EpsilonOf(at_z, c.delta), c.target);
    RdpAccountant below;
    ASSERT_TRUE(below.Compose(c.q, *z * (1 - 1e-4), c.steps).ok());
    EXPECT_GT(EpsilonOf(below, c.delta), c.target);
  }
}

// TF Privacy's test_compute_dp_sgd_privacy case 0 backwards: z = 1.3 gives
// epsilon 0.7242234026109595 at its orders (rdp_test.cc), so that target
// needs z = 1.3 to the search's resolution.
TEST(NoiseMultiplierForTest, InvertsTfPrivacysGoldenCase) {
  absl::StatusOr<double> z = NoiseMultiplierFor(
      150.0 / 60000, 6000, 1e-5, 0.7242234026109595, TfPrivacyOrders());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_GE(*z, 1.3 * (1 - 1e-6));
  EXPECT_LE(*z, 1.3 * (1 + 1e-4));
}

TEST(NoiseMultiplierForTest, EdgeCasesAndRefusals) {
  EXPECT_EQ(*NoiseMultiplierFor(0, 100, 1e-5, 1), 0);
  EXPECT_EQ(*NoiseMultiplierFor(0.1, 0, 1e-5, 1), 0);
  ExpectInvalidArgument(NoiseMultiplierFor(1.5, 10, 1e-5, 1).status(),
                        "sampling rate");
  ExpectInvalidArgument(NoiseMultiplierFor(0.1, -1, 1e-5, 1).status(), "steps");
  ExpectInvalidArgument(NoiseMultiplierFor(0.1, 10, 0, 1).status(), "delta");
  ExpectInvalidArgument(NoiseMultiplierFor(0.1, 10, 1, 1).status(), "delta");
  for (double target : {0.0, -1.0, kInf, std::nan("")}) {
    ExpectInvalidArgument(NoiseMultiplierFor(0.1, 10, 1e-5, target).status(),
                          "target epsilon");
  }
  ExpectInvalidArgument(NoiseMultiplierFor(0.1, 10, 1e-5, 1, {0.5, 2}).status(),
                        "order 0.5");
  // 1e18 rounds without sampling: even z = 2^30 spends more than 1e-3.
  absl::StatusOr<double> unreachable =
      NoiseMultiplierFor(1, 1'000'000'000'000'000'000, 1e-5, 1e-3);
  EXPECT_EQ(unreachable.status().code(), absl::StatusCode::kNotFound)
      << unreachable.status();
  EXPECT_TRUE(absl::StrContains(unreachable.status().message(), "2^30"));
}

}  // namespace
}  // namespace fedberry::privacy::rdp_accountant_test
