// The log-space helpers against direct computation where a double holds
// the answer, and against long double where it does not.
#include "privacy/log_space.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fedberry::privacy::log_space_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LogAddTest, AddsInLogSpaceWithZeroAsMinusInfinity) {
  EXPECT_NEAR(LogAdd(std::log(2.0), std::log(3.0)), std::log(5.0), 1e-15);
  EXPECT_EQ(LogAdd(std::log(3.0), std::log(2.0)),
            LogAdd(std::log(2.0), std::log(3.0)));
  EXPECT_EQ(LogAdd(-kInf, 3.0), 3.0);
  EXPECT_EQ(LogAdd(3.0, -kInf), 3.0);
  EXPECT_EQ(LogAdd(-kInf, -kInf), -kInf);
  EXPECT_EQ(LogAdd(kInf, 1.0), kInf);
  EXPECT_EQ(LogAdd(kInf, kInf), kInf);
  // Far apart: the smaller term vanishes instead of overflowing.
  EXPECT_EQ(LogAdd(1000.0, 0.0), 1000.0);
  EXPECT_NEAR(LogAdd(1e6, 1e6), 1e6 + std::log(2.0), 1e-9);
}

TEST(LogAbsBinomialTest, IntegerAndFractionalOrders) {
  EXPECT_NEAR(LogAbsBinomial(10, 3), std::log(120.0), 1e-13);
  EXPECT_NEAR(LogAbsBinomial(1024, 512),
              std::lgamma(1025.0) - 2 * std::lgamma(513.0), 1e-9);
  // C(2.5, 4) = 2.5 * 1.5 * 0.5 * -0.5 / 4! = -0.0390625: the magnitude.
  EXPECT_NEAR(LogAbsBinomial(2.5, 4), std::log(0.0390625), 1e-13);
  EXPECT_NEAR(LogAbsBinomial(2.5, 0), 0.0, 1e-15);
}

TEST(LogErfcTest, MatchesLogOfErfcWhereErfcIsANormalDouble) {
  for (double x : {-5.0, -1.0, 0.0, 0.5, 1.0, 5.0, 20.0, 26.0}) {
    SCOPED_TRACE(x);
    const double expected = std::log(std::erfc(x));
    EXPECT_NEAR(LogErfc(x), expected, 1e-14 * std::max(1.0, -expected));
  }
}

TEST(LogErfcTest, StaysAccurateWhereErfcUnderflowsADouble) {
  // erfc(26.55) is below DBL_MIN; long double still holds erfc(100) ~
  // 1e-4345.
  for (double x : {26.5, 26.6, 27.0, 30.0, 50.0, 100.0}) {
    SCOPED_TRACE(x);
    const long double expected =
        std::log(std::erfc(static_cast<long double>(x)));
    ASSERT_TRUE(std::isfinite(static_cast<double>(expected)));
    EXPECT_NEAR(LogErfc(x), static_cast<double>(expected),
                1e-14 * -static_cast<double>(expected));
  }
}

}  // namespace
}  // namespace fedberry::privacy::log_space_test
