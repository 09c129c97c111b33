// Quantisation: the field holds N summands without wrapping, values round
// trip within the documented error (step / 2 deterministic, below a step
// stochastic, which is also unbiased), sums dequantise for any count of
// summands up to N, and bad settings or sums are refused.
#include "secagg/quantise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "secagg/testing/fake_random.h"

namespace fedberry::secagg::quantise_test {
namespace {

using testing::ScriptedRandom;
using testing::SeededRandom;

Quantiser Make(double clip, int bits, uint32_t n) {
  absl::StatusOr<Quantiser> q = Quantiser::Create(clip, bits, n);
  EXPECT_TRUE(q.ok()) << q.status();
  return *q;
}

std::vector<float> Ramp(double clip, int count) {
  std::vector<float> values;
  values.reserve(count);
  for (int i = 0; i < count; ++i) {
    values.push_back(static_cast<float>(-clip + 2 * clip * i / (count - 1)));
  }
  return values;
}

struct Setting {
  double clip;
  int bits;
  uint32_t summands;
};

class QuantiseTable : public ::testing::TestWithParam<Setting> {};

TEST_P(QuantiseTable, LevelsLeaveRoomForTheSum) {
  const Setting s = GetParam();
  const Quantiser q = Make(s.clip, s.bits, s.summands);
  const uint64_t top = (uint64_t{1} << s.bits) - 1;
  EXPECT_EQ(q.levels(), top / s.summands);
  EXPECT_LE(uint64_t{q.levels()} * s.summands, top);  // the sum never wraps
  EXPECT_DOUBLE_EQ(q.step(), 2 * s.clip / q.levels());
}

TEST_P(QuantiseTable, DeterministicRoundTripIsWithinHalfAStep) {
  const Setting s = GetParam();
  const Quantiser q = Make(s.clip, s.bits, s.summands);
  const std::vector<float> values = Ramp(s.clip, 1001);
  absl::StatusOr<std::vector<uint32_t>> levels = q.Quantise(values);
  ASSERT_TRUE(levels.ok()) << levels.status();
  EXPECT_EQ(levels->front(), 0u);
  EXPECT_EQ(levels->back(), q.levels());
  absl::StatusOr<std::vector<double>> back = q.Dequantise(*levels, 1);
  ASSERT_TRUE(back.ok()) << back.status();
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_LE((*levels)[i], q.levels());
    // C / M, plus float32's own rounding of the input.
    EXPECT_LE(std::abs((*back)[i] - values[i]), q.step() / 2 + 1e-6 * s.clip)
        << values[i];
  }
}

TEST_P(QuantiseTable, StochasticRoundingIsWithinAStepAndUnbiased) {
  const Setting s = GetParam();
  const Quantiser q = Make(s.clip, s.bits, s.summands);
  // A value between two levels, rounded many times: the mean comes back.
  const float x = static_cast<float>(0.3 * s.clip + q.step() / 3);
  const std::vector<float> values(20000, x);
  SeededRandom random(11);
  absl::StatusOr<std::vector<uint32_t>> levels = q.Quantise(values, &random);
  ASSERT_TRUE(levels.ok()) << levels.status();
  absl::StatusOr<std::vector<double>> back = q.Dequantise(*levels, 1);
  ASSERT_TRUE(back.ok());
  double mean = 0;
  for (double v : *back) {
    EXPECT_LT(std::abs(v - x), q.step() + 1e-6 * s.clip);
    mean += v / back->size();
  }
  // 5 standard errors of a Bernoulli over a step.
  EXPECT_NEAR(mean, x, 5 * 0.5 * q.step() / std::sqrt(20000.0) + 1e-6 * s.clip);
}

TEST_P(QuantiseTable, SumsOfUpToNSummandsDequantise) {
  const Setting s = GetParam();
  const Quantiser q = Make(s.clip, s.bits, s.summands);
  const std::vector<float> values = Ramp(s.clip, 101);
  absl::StatusOr<std::vector<uint32_t>> levels = q.Quantise(values);
  ASSERT_TRUE(levels.ok());
  for (uint32_t k : {1u, s.summands}) {
    // k boards send the same vector: the integer sum never wraps mod 2^bits.
    std::vector<uint32_t> sum(levels->size(), 0);
    const uint32_t keep =
        s.bits == 32 ? ~uint32_t{0} : (uint32_t{1} << s.bits) - 1;
    for (uint32_t board = 0; board < k; ++board) {
      for (size_t i = 0; i < sum.size(); ++i) {
        sum[i] = (sum[i] + (*levels)[i]) & keep;
      }
    }
    absl::StatusOr<std::vector<double>> back = q.Dequantise(sum, k);
    ASSERT_TRUE(back.ok()) << back.status();
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NEAR((*back)[i], k * double{values[i]},
                  k * (q.step() / 2 + 1e-6 * s.clip));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, QuantiseTable,
                         ::testing::Values(Setting{1.0, 32, 1},
                                           Setting{1.0, 32, 1000},
                                           Setting{0.05, 24, 200},
                                           Setting{3.0, 16, 100},
                                           Setting{1.0, 8, 10}));

TEST(QuantiseTest, ValuesAreClippedAndNaNRefused) {
  const Quantiser q = Make(1.0, 16, 4);
  const float inf = std::numeric_limits<float>::infinity();
  absl::StatusOr<std::vector<uint32_t>> levels =
      q.Quantise(std::vector<float>{-5, 5, -inf, inf, 0});
  ASSERT_TRUE(levels.ok()) << levels.status();
  ASSERT_EQ(levels->size(), 5u);
  EXPECT_EQ(std::vector<uint32_t>(levels->begin(), levels->begin() + 4),
            (std::vector<uint32_t>{0, q.levels(), 0, q.levels()}));
  // 0 is half way: M / 2, to a level either side of it.
  EXPECT_LE(std::abs((*levels)[4] - q.levels() / 2.0), 0.5);
  const absl::Status status =
      q.Quantise(std::vector<float>{0, std::nanf("")}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "value 1 to quantise is NaN"))
      << status;
  ScriptedRandom none({});
  EXPECT_EQ(q.Quantise(std::vector<float>{0}, &none).status().code(),
            absl::StatusCode::kInternal);
}

TEST(QuantiseTest, BadSettingsAreRefused) {
  const double nan = std::nan("");
  for (double clip :
       {0.0, -1.0, nan, std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(Quantiser::Create(clip, 16, 1).status().code(),
              absl::StatusCode::kInvalidArgument)
        << clip;
  }
  for (int bits : {0, 33}) {
    EXPECT_EQ(Quantiser::Create(1, bits, 1).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(Quantiser::Create(1, 16, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  // 8 bits hold 255 summands at one level each, not 256.
  EXPECT_TRUE(Quantiser::Create(1, 8, 255).ok());
  const absl::Status status = Quantiser::Create(1, 8, 256).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "at least 9 bits")) << status;
}

TEST(QuantiseTest, ImpossibleSumsAndCountsAreRefused) {
  const Quantiser q = Make(1.0, 16, 4);  // M = 16383
  EXPECT_EQ(q.levels(), 16383u);
  EXPECT_TRUE(q.Dequantise(std::vector<uint32_t>{2 * 16383}, 2).ok());
  const absl::Status status =
      q.Dequantise(std::vector<uint32_t>{2 * 16383 + 1}, 2).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "is above 32766")) << status;
  EXPECT_EQ(q.Dequantise(std::vector<uint32_t>{0}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(q.Dequantise(std::vector<uint32_t>{0}, 5).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedberry::secagg::quantise_test
