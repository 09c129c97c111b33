// RDP of the Poisson-subsampled Gaussian mechanism and its conversion to
// (epsilon, delta), against the golden values of the published tests of
// Google's accountant, with the tolerances those tests use:
//  [dp_accounting] google/differential-privacy,
//    python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant_test.py
//    (as of commit fc5d3c3d2ff80fbdfea2a493220d5ff68aab13ec, 2026-06-18);
//  [TF Privacy] tensorflow/privacy,
//    tensorflow_privacy/privacy/analysis/compute_dp_sgd_privacy_test.py
//    (as of commit 03035d5d4a271ac795dab80f5bc1cef82fc3d462), whose values
//    dp_accounting's RdpAccountant computes;
//  [TF Privacy, old] the same repository's
//    tensorflow_privacy/privacy/analysis/rdp_accountant_test.py (commit
//    38fe4aa984ca5da36416c8b5b4197fbad105b020), for integer orders only:
//    its fractional-order values predate dp_accounting's 2024 change.
// Python's assertAlmostEqual(a, b) is |a - b| < 5e-8 (7 places);
// np.allclose(a, b, rtol) is |a - b| <= 1e-8 + rtol |b|.
#include "privacy/rdp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "privacy/log_space.h"
#include "privacy/rdp_accountant.h"
#include "tests/privacy/tf_privacy_orders.h"

namespace fedberry::privacy::rdp_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSevenPlaces = 5e-8;  // assertAlmostEqual's default

// The epsilon of `steps` rounds at (q, z), at `orders`.
PrivacySpent SpentAfterSteps(double q, double z, int64_t steps, double delta,
                             const std::vector<double>& orders) {
  RdpAccountant accountant(orders);
  EXPECT_TRUE(accountant.Compose(q, z, steps).ok());
  absl::StatusOr<PrivacySpent> spent = accountant.Spent(delta);
  EXPECT_TRUE(spent.ok()) << spent.status();
  return spent.ok() ? *spent : PrivacySpent{-1, -1};
}

TEST(DefaultOrdersTest, AreDpAccountingsGrid) {
  const std::vector<double> orders = DefaultOrders();
  ASSERT_EQ(orders.size(), 156u);
  EXPECT_EQ(orders[0], 1 + 1 / 10.0);
  EXPECT_EQ(orders[1], 1.2);
  EXPECT_EQ(orders[57], 6.8);
  EXPECT_EQ(orders[98], 1 + 99 / 10.0);
  EXPECT_EQ(orders[99], 11.0);
  EXPECT_EQ(orders[151], 63.0);
  EXPECT_EQ(std::vector<double>(orders.end() - 4, orders.end()),
            (std::vector<double>{128, 256, 512, 1024}));
}

// [dp_accounting] test_compute_rdp_poisson_sampled_gaussian.
TEST(SubsampledGaussianRdpTest, MatchesDpAccountingGoldenValues) {
  const std::vector<double> orders = {1.5, 2.5, 5, 50, 100, kInf};
  const std::vector<double> expected = {6.70579741e-04, 1.08548710e-03,
                                        2.18075656e-03, 2.38460375e-02,
                                        1.67416308e02,  kInf};
  const std::vector<double> one = SubsampledGaussianRdp(0.01, 2.5, orders);
  ASSERT_EQ(one.size(), orders.size());
  for (size_t i = 0; i < orders.size(); ++i) {
    SCOPED_TRACE(orders[i]);
    const double rdp = 50 * one[i];
    if (std::isinf(expected[i])) {
      EXPECT_EQ(rdp, kInf);
    } else {
      EXPECT_NEAR(rdp, expected[i], 1e-8 + 1e-4 * expected[i]);
    }
  }
}

// [TF Privacy, old] test_compute_rdp_scalar, _no_data, _no_sampling.
TEST(SubsampledGaussianRdpTest, MatchesTfPrivacyIntegerOrderValues) {
  EXPECT_NEAR(10 * SubsampledGaussianRdp(0.1, 2, {5})[0], 0.07737, 5e-6);
  EXPECT_EQ(SubsampledGaussianRdp(0, 10, {20})[0], 0.0);
  EXPECT_EQ(SubsampledGaussianRdp(1, 10, {20})[0], 0.1);
}

// [dp_accounting] test_compute_rdp_gaussian: no sampling, alpha / 2 z^2.
TEST(SubsampledGaussianRdpTest, WithoutSamplingIsTheGaussianMechanisms) {
  const double alpha = 3.14159;
  const double sigma = 2.71828;
  EXPECT_NEAR(SubsampledGaussianRdp(1, sigma, {alpha})[0],
              alpha / (2 * sigma * sigma), kSevenPlaces);
}

TEST(SubsampledGaussianRdpTest, EdgeCasesAndBadInput) {
  // No sampling spends nothing, even without noise; no noise, everything.
  EXPECT_EQ(SubsampledGaussianRdp(0, 0, {2.5})[0], 0.0);
  EXPECT_EQ(SubsampledGaussianRdp(0.5, 0, {2.5})[0], kInf);
  EXPECT_EQ(SubsampledGaussianRdp(0.5, 1, {kInf})[0], kInf);
  for (const auto& [q, z, order] :
       std::vector<std::tuple<double, double, double>>{
           {-0.1, 1, 2},
           {1.1, 1, 2},
           {std::nan(""), 1, 2},
           {0.5, -1, 2},
           {0.5, kInf, 2},
           {0.5, 1, 1.0},
           {0.5, 1, std::nan("")}}) {
    SCOPED_TRACE(testing::Message() << q << " " << z << " " << order);
    EXPECT_TRUE(std::isnan(SubsampledGaussianRdp(q, z, {order})[0]));
  }
}

// log(A_alpha) by the trapezoid rule in log space over a step far below
// the integrand's width: the check dp_accounting's
// test_compute_log_a_equals_mp makes with mpmath's quadrature.
double LogAByQuadrature(double q, double sigma, double alpha) {
  const double lo = -40 * sigma - 2;
  const double hi = alpha + 40 * sigma + 2;
  const double step = sigma / 64;
  const int64_t n = static_cast<int64_t>((hi - lo) / step) + 1;
  std::vector<double> log_f(n + 1);
  double max_log_f = -kInf;
  for (int64_t k = 0; k <= n; ++k) {
    const double z = lo + k * step;
    const double log_mu0 = -z * z / (2 * sigma * sigma) - std::log(sigma) -
                           0.5 * std::log(2 * M_PI);
    const double log_ratio =
        LogAdd(std::log1p(-q), std::log(q) + (2 * z - 1) / (2 * sigma * sigma));
    log_f[k] = log_mu0 + alpha * log_ratio;
    max_log_f = std::max(max_log_f, log_f[k]);
  }
  double sum = 0;
  for (int64_t k = 0; k <= n; ++k) {
    const double weight = (k == 0 || k == n) ? 0.5 : 1.0;
    sum += weight * std::exp(log_f[k] - max_log_f);
  }
  return max_log_f + std::log(sum * step);
}

// [dp_accounting] test_compute_log_a_equals_mp: its parameters and
// tolerance (rtol 1e-4, atol 1e-8).
TEST(SubsampledGaussianLogATest, MatchesNumericalIntegration) {
  struct Case {
    double q, sigma, order;
  };
  for (const Case& c : std::vector<Case>{{1e-7, 0.1, 1.01},
                                         {1e-6, 0.1, 256},
                                         {1e-5, 0.1, 256.1},
                                         {1e-6, 1, 27},
                                         {1e-4, 1.0, 1.5},
                                         {1e-3, 1.0, 2},
                                         {0.01, 10, 20},
                                         {0.1, 100, 20.5},
                                         {0.99, 0.1, 256},
                                         {0.999, 100, 256.1}}) {
    SCOPED_TRACE(testing::Message() << "q=" << c.q << " sigma=" << c.sigma
                                    << " order=" << c.order);
    const double expected = LogAByQuadrature(c.q, c.sigma, c.order);
    EXPECT_NEAR(SubsampledGaussianLogA(c.q, c.sigma, c.order), expected,
                1e-8 + 1e-4 * std::abs(expected));
  }
}

// [dp_accounting] test_log_a_frac_positive: orders that once gave a
// negative log(A) (np.linspace(58.5, 59.5, 21); 59 takes the integer sum
// here, the fractional one there).
TEST(SubsampledGaussianLogATest, IsPositiveWhereItOnceWasNot) {
  for (int k = 0; k <= 20; ++k) {
    const double order = 58.5 + k * 0.05;
    SCOPED_TRACE(order);
    EXPECT_GT(SubsampledGaussianLogA(0.4, 12, order), 0);
  }
}

// [dp_accounting] test_log_a_frac_early_termination: at q = 0.1, z = 1 some
// fractional default orders do not converge; they are +infinity, left out
// of epsilon rather than under-counted.
TEST(SubsampledGaussianLogATest, OrdersThatDoNotConvergeAreInfinite) {
  const std::vector<double> rdp =
      SubsampledGaussianRdp(0.1, 1.0, DefaultOrders());
  EXPECT_NE(std::find(rdp.begin(), rdp.end(), kInf), rdp.end());
  absl::StatusOr<PrivacySpent> spent =
      EpsilonFromRdp(DefaultOrders(), rdp, 1e-5);
  ASSERT_TRUE(spent.ok()) << spent.status();
  EXPECT_TRUE(std::isfinite(spent->epsilon));
}

// [dp_accounting] test_zero_poisson_sample, test_epsilon_non_private_gaussian.
TEST(EpsilonFromRdpTest, NoSamplingIsZeroAndNoNoiseIsInfinite) {
  for (double z : {1.0, 0.0}) {
    EXPECT_EQ(SpentAfterSteps(0, z, 1, 1e-10, {3.14159}).epsilon, 0.0) << z;
  }
  EXPECT_EQ(SpentAfterSteps(1, 0, 1, 1e-1, {3.14159}).epsilon, kInf);
}

// [dp_accounting] test_compute_epsilon_delta_pure_dp.
TEST(EpsilonFromRdpTest, PureDpMatchesDpAccounting) {
  std::vector<double> orders;
  for (int order = 2; order < 33; ++order) orders.push_back(order);
  const std::vector<double> rdp(orders.size(), 1.1);
  absl::StatusOr<PrivacySpent> spent = EpsilonFromRdp(orders, rdp, 1e-5);
  ASSERT_TRUE(spent.ok()) << spent.status();
  EXPECT_NEAR(spent->epsilon, 1.32783806176, kSevenPlaces);
  EXPECT_EQ(spent->order, 32);
}

// [dp_accounting] test_compute_epsilon_delta_gaussian: a noise multiplier
// chosen to give exactly (1, 1e-6)-DP, over 99,000 orders.
TEST(EpsilonFromRdpTest, GaussianMatchesDpAccounting) {
  std::vector<double> orders;
  for (int i = 1000; i < 100000; ++i) orders.push_back(0.001 * i);
  absl::StatusOr<PrivacySpent> spent = EpsilonFromRdp(
      orders, SubsampledGaussianRdp(1, 4.530877117, orders), 1e-6);
  ASSERT_TRUE(spent.ok()) << spent.status();
  EXPECT_NEAR(spent->epsilon, 1, kSevenPlaces);
}

// [dp_accounting] test_delta_bounds_gaussian, read in the epsilon
// direction: for the Gaussian mechanism (q = 1, z = 1) the epsilon from RDP
// is at least the optimal one (Balle and Wang 2018, Theorem 8: its delta at
// that epsilon is within delta) and at most the "standard" bound's.
TEST(EpsilonFromRdpTest, GaussianIsBetweenTheOptimalAndTheStandardBound) {
  std::vector<double> orders;
  for (int x = 10; x < 505; ++x) orders.push_back(0.1 * x);
  const std::vector<double> rdp = SubsampledGaussianRdp(1, 1, orders);
  for (double delta : {0.5, 0.1, 1e-2, 1e-3, 1e-5, 1e-7, 1e-9, 1e-12}) {
    SCOPED_TRACE(delta);
    absl::StatusOr<PrivacySpent> spent = EpsilonFromRdp(orders, rdp, delta);
    ASSERT_TRUE(spent.ok()) << spent.status();
    const double eps = spent->epsilon;
    const double optimal_delta =
        std::erfc((eps - 0.5) / std::sqrt(2.0)) / 2 -
        std::exp(eps) * std::erfc((eps + 0.5) / std::sqrt(2.0)) / 2;
    EXPECT_LE(optimal_delta, delta * (1 + 1e-9));
    EXPECT_LE(eps, 0.5 + std::sqrt(-2 * std::log(delta)));
  }
}

// [TF Privacy] test_compute_dp_sgd_privacy: (n, batch size, z, epochs,
// delta) -> epsilon and order, at TF Privacy's orders; q = batch / n, steps
// = ceil(epochs n / batch).
TEST(EpsilonFromRdpTest, MatchesTfPrivacyDpSgdValues) {
  struct Case {
    double n, batch, z, epochs, delta, epsilon, order, tolerance;
  };
  for (const Case& c : std::vector<Case>{
           {60000, 150, 1.3, 15, 1e-5, 0.7242234026109595, 19.0, kSevenPlaces},
           {100000, 100, 1.0, 30, 1e-7, 1.4154988495444842, 13.0, kSevenPlaces},
           // 7 places of 5.9e6 are 16 significant digits, beyond what two
           // libms agree on (dp_accounting's own figure moved by 1.6e-5 in
           // 2024, from 5907982.31138195): here 1e-12 relative.
           {1e8, 1024, 0.1, 10, 1e-7, 5907982.3113984, 1.25,
            1e-12 * 5907982.3113984}}) {
    SCOPED_TRACE(c.n);
    const PrivacySpent spent = SpentAfterSteps(
        c.batch / c.n, c.z,
        static_cast<int64_t>(std::ceil(c.epochs * c.n / c.batch)), c.delta,
        TfPrivacyOrders());
    EXPECT_NEAR(spent.epsilon, c.epsilon, c.tolerance);
    EXPECT_EQ(spent.order, c.order);
  }
}

// [TF Privacy] test_compute_dp_sgd_example_privacy (RDP rows: z = 0.7
// halved with microbatching; 1.2 epochs, so 2 steps without sampling and
// ceil(1.2 / 0.01) = 120 with q = 0.01) and the RDP privacy statement (z =
// 2 halved, 5 epochs, q = 64 / 10000; printed to 3 decimals), at
// dp_accounting's default orders.
TEST(EpsilonFromRdpTest, MatchesTfPrivacyExampleLevelValues) {
  struct Case {
    double q, z;
    int64_t steps;
    double delta, epsilon, tolerance;
  };
  for (const Case& c :
       std::vector<Case>{{1.0, 0.7, 2, 1e-5, 10.8602036, kSevenPlaces},
                         {1.0, 0.35, 2, 1e-5, 26.2880374, kSevenPlaces},
                         {0.01, 0.7, 120, 1e-5, 3.2392676, kSevenPlaces},
                         {0.01, 0.35, 120, 1e-5, 22.6248601, kSevenPlaces},
                         {1.0, 1.0, 5, 1e-6, 13.376, 5e-4},
                         {64.0 / 10000, 1.0, 782, 1e-6, 1.616, 5e-4}}) {
    SCOPED_TRACE(testing::Message() << "q=" << c.q << " z=" << c.z);
    EXPECT_NEAR(
        SpentAfterSteps(c.q, c.z, c.steps, c.delta, DefaultOrders()).epsilon,
        c.epsilon, c.tolerance);
  }
  EXPECT_EQ(static_cast<int64_t>(std::ceil(1.2 / 0.01)), 120);
}

// [TF Privacy, old] test_check_composition: two phases composed stay within
// the bound the old conversion gave (8.509656).
TEST(EpsilonFromRdpTest, CompositionStaysWithinTfPrivacysOldBound) {
  const std::vector<double> orders = {1.25, 1.5, 1.75, 2,  2.5, 3,  4,
                                      5,    6,   7,    8,  10,  12, 14,
                                      16,   20,  24,   28, 32,  64, 256};
  RdpAccountant accountant(orders);
  ASSERT_TRUE(accountant.Compose(1e-4, 0.4, 40000).ok());
  ASSERT_TRUE(accountant.Compose(0.1, 2, 100).ok());
  absl::StatusOr<PrivacySpent> spent = accountant.Spent(1e-5);
  ASSERT_TRUE(spent.ok()) << spent.status();
  EXPECT_LE(spent->epsilon, 8.509656);
}

TEST(EpsilonFromRdpTest, EdgeCasesOfTheConversion) {
  // Below the KL bound: epsilon 0 at the first such order.
  absl::StatusOr<PrivacySpent> tiny =
      EpsilonFromRdp({2, 3}, {1e-12, 1e-12}, 1e-5);
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  EXPECT_EQ(tiny->epsilon, 0);
  EXPECT_EQ(tiny->order, 2);
  // Orders up to 1.01 give no epsilon; every order infinite: the first.
  absl::StatusOr<PrivacySpent> none =
      EpsilonFromRdp({1.0, 1.01, 4}, {0.5, 0.5, kInf}, 1e-5);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->epsilon, kInf);
  EXPECT_EQ(none->order, 1.0);
}

TEST(EpsilonFromRdpTest, RefusesBadInputNamingIt) {
  const std::vector<double> orders = {2, 3};
  const std::vector<double> rdp = {0.1, 0.2};
  struct Case {
    std::vector<double> orders, rdp;
    double delta;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {orders, rdp, 0, "delta"},
           {orders, rdp, 1, "delta"},
           {orders, rdp, -1e-5, "delta"},
           {orders, rdp, std::nan(""), "delta"},
           {orders, {0.1}, 1e-5, "2 orders and 1 RDP"},
           {{}, {}, 1e-5, "0 orders"},
           {{2, 0.5}, rdp, 1e-5, "order 0.5 (index 1)"},
           {orders, {0.1, -0.2}, 1e-5, "order 3 (index 1) is -0.2"},
           {orders, {std::nan(""), 0.2}, 1e-5, "order 2 (index 0) is nan"}}) {
    SCOPED_TRACE(c.message);
    absl::StatusOr<PrivacySpent> spent =
        EpsilonFromRdp(c.orders, c.rdp, c.delta);
    EXPECT_EQ(spent.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(spent.status().message(), c.message))
        << spent.status();
  }
}

}  // namespace
}  // namespace fedberry::privacy::rdp_test
