// The SecAgg+ chooser: its K and t for the cohorts of the issue (printed),
// the bounds they meet, the complete graph for tiny cohorts, growth with n
// and with the rates, the stricter malicious-server rule, and refusals.
#include "secagg/parameters.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/match.h"

namespace fedberry::secagg::parameters_test {
namespace {

SecAggParameters Choose(int n, ParameterOptions options = {}) {
  absl::StatusOr<SecAggParameters> p = ChooseParameters(n, options);
  EXPECT_TRUE(p.ok()) << n << ": " << p.status();
  return p.ok() ? *p : SecAggParameters{};
}

void ExpectSane(int n, const SecAggParameters& p, const ParameterOptions& o) {
  EXPECT_GE(p.neighbours, 1);
  EXPECT_LE(p.neighbours, n - 1);
  EXPECT_GE(p.threshold, 1);
  EXPECT_LE(p.threshold, p.neighbours + 1);
  EXPECT_LE(p.correctness_failure, std::exp2(o.correctness_log2));
  EXPECT_LE(p.security_failure, std::exp2(o.security_log2));
  EXPECT_GE(p.correctness_failure, 0);
  EXPECT_GE(p.security_failure, 0);
}

// The issue's cohorts with delta = gamma = 0.1, printed for the record.
TEST(ParametersTest, IssueCohorts) {
  const ParameterOptions options;  // 0.1, 0.1, 2^-20, 2^-40
  for (int n : {10, 50, 200}) {
    const SecAggParameters p = Choose(n, options);
    std::printf(
        "n=%d: K=%d t=%d (corrupt %d, dropped %d) correctness failure %.3g "
        "(<= 2^-20 = %.3g) security failure %.3g (<= 2^-40 = %.3g)\n",
        n, p.neighbours, p.threshold, p.corrupt, p.dropped,
        p.correctness_failure, std::exp2(-20), p.security_failure,
        std::exp2(-40));
    ExpectSane(n, p, options);
    EXPECT_EQ(p.corrupt, n / 10);
    EXPECT_EQ(p.dropped, n / 10);
    // A board's threshold stays above the corrupt boards it can meet, or
    // the security bound is met by chance alone.
    EXPECT_GT(p.threshold, 1);
  }
  // Sparse beyond the smallest cohorts: K well below n - 1 at 200, and
  // still a sizeable fraction of the neighbours needed.
  const SecAggParameters p200 = Choose(200, options);
  EXPECT_LT(p200.neighbours, 100);
  EXPECT_GE(2 * p200.threshold, p200.neighbours / 2);
}

// A cohort too small for a sparse graph gets the complete one (K = n - 1),
// and one too small for any gets an error naming its counts.
TEST(ParametersTest, TinyCohortsUseTheCompleteGraphOrAreRefused) {
  const SecAggParameters p5 = Choose(5);  // 1 corrupt, 1 dropped
  EXPECT_EQ(p5.neighbours, 4);
  EXPECT_EQ(p5.threshold, 2);
  EXPECT_EQ(p5.correctness_failure, 0);
  EXPECT_EQ(p5.security_failure, 0);
  // 3 boards, 1 corrupt, 1 dropped: the other two may be both bad.
  const absl::Status status = ChooseParameters(3).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "3 boards with 1 corrupt and 1 dropped"))
      << status;
}

// K grows with n like log n. Not strictly: ceil(gamma n) steps up at some n
// and the corrupt share of a board's peers then falls as n grows, so K may
// dip by a little from one n to the next; it never falls far below the
// largest K of the smaller cohorts.
TEST(ParametersTest, NeighboursGrowWithTheCohort) {
  int previous = 0;
  for (int n : {10, 20, 50, 100, 200, 500, 1000, 2000}) {
    const SecAggParameters p = Choose(n);
    ExpectSane(n, p, ParameterOptions());
    EXPECT_GE(p.neighbours, previous) << n;
    previous = p.neighbours;
  }
  EXPECT_LT(previous, 150);  // at n = 2000: logarithmic, not linear
  int largest = 0;
  for (int n = 5; n <= 400; ++n) {
    const SecAggParameters p = Choose(n);
    EXPECT_GE(p.neighbours, largest - 3) << n;
    largest = std::max(largest, p.neighbours);
  }
}

TEST(ParametersTest, MoreDropoutsOrCorruptionNeedMoreNeighbours) {
  int previous = 0;
  for (double rate : {0.0, 0.05, 0.1, 0.2, 0.3}) {
    ParameterOptions o;
    o.dropout_rate = rate;
    const SecAggParameters p = Choose(500, o);
    ExpectSane(500, p, o);
    EXPECT_GE(p.neighbours, previous) << rate;
    previous = p.neighbours;
  }
  previous = 0;
  for (double rate : {0.0, 0.05, 0.1, 0.2}) {
    ParameterOptions o;
    o.corrupt_rate = rate;
    const SecAggParameters p = Choose(500, o);
    ExpectSane(500, p, o);
    EXPECT_GE(p.neighbours, previous) << rate;
    previous = p.neighbours;
  }
}

// Against a server that lies about dropouts, security needs corrupt < 2t -
// K: thresholds above K / 2, and more neighbours.
TEST(ParametersTest, AMaliciousServerNeedsAMajorityThreshold) {
  ParameterOptions o;
  o.threat = ThreatModel::kMaliciousServer;
  for (int n : {10, 50, 200}) {
    const SecAggParameters p = Choose(n, o);
    ExpectSane(n, p, o);
    EXPECT_GT(2 * p.threshold, p.neighbours) << n;
    EXPECT_GE(p.neighbours, Choose(n).neighbours) << n;
    std::printf("malicious server, n=%d: K=%d t=%d\n", n, p.neighbours,
                p.threshold);
  }
}

TEST(ParametersTest, BadArgumentsAreRefused) {
  EXPECT_EQ(ChooseParameters(1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseParameters(kMaxParameterCohort + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (double rate : {-0.1, 1.0, std::nan("")}) {
    ParameterOptions o;
    o.dropout_rate = rate;
    EXPECT_EQ(ChooseParameters(50, o).status().code(),
              absl::StatusCode::kInvalidArgument);
    o = ParameterOptions();
    o.corrupt_rate = rate;
    EXPECT_EQ(ChooseParameters(50, o).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  ParameterOptions o;
  o.security_log2 = 0;
  EXPECT_EQ(ChooseParameters(50, o).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Half the cohort corrupt and a third dropping: nothing works.
  o = ParameterOptions();
  o.corrupt_rate = 0.5;
  o.dropout_rate = 0.35;
  EXPECT_EQ(ChooseParameters(200, o).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fedberry::secagg::parameters_test
