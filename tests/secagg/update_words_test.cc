// UpdateWords (secagg/update_words.h): what a board masks is its clipped,
// weighted change and its weight, quantised; the plain sum of several
// boards' words decodes to their weighted mean within the quantisation
// step, and malformed updates and sums are refused by name.
#include "secagg/update_words.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

namespace fedberry::secagg {
namespace {

using ::testing::HasSubstr;

constexpr double kClip = 0.5;

// A small model: two floating tensors and an integer counter.
runtime::NamedTensors Model(float w, float b, int64_t count) {
  return {{"w", torch::full({2, 3}, w)},
          {"b", torch::full({2}, b)},
          {"steps", torch::full({1}, count, torch::kLong)}};
}

// The plain sum mod 2^32 of the boards' words (what unmasking yields).
std::vector<uint32_t> PlainSum(const std::vector<std::vector<uint32_t>>& all) {
  std::vector<uint32_t> sum(all[0].size(), 0);
  for (const auto& words : all) {
    for (size_t i = 0; i < words.size(); ++i) sum[i] += words[i];
  }
  return sum;
}

TEST(UpdateWords, OneWordPerFloatingValuePlusTheWeight) {
  auto words = UpdateWords::Create(Model(0, 0, 0), kClip, 32, 4);
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(words->vector_length(), 6u + 2u + 1u);
}

TEST(UpdateWords, SumOfBoardsDecodesToTheirWeightedMean) {
  const runtime::NamedTensors global = Model(1.0f, -1.0f, 7);
  auto words = UpdateWords::Create(global, kClip, 32, 3);
  ASSERT_TRUE(words.ok()) << words.status();
  // Changes +0.2, -0.1 and +0.4 on w (b moves by the opposite), weights
  // 1, 0.5 and 0.25.
  const std::vector<float> changes = {0.2f, -0.1f, 0.4f};
  const std::vector<double> weights = {1.0, 0.5, 0.25};
  std::vector<std::vector<uint32_t>> all;
  for (size_t i = 0; i < changes.size(); ++i) {
    auto encoded = words->Encode(
        Model(1.0f + changes[i], -1.0f - changes[i], 99), global, weights[i]);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    all.push_back(*encoded);
  }
  auto mean = words->Decode(PlainSum(all), 3, global);
  ASSERT_TRUE(mean.ok()) << mean.status();
  const double expected = (0.2 * 1.0 - 0.1 * 0.5 + 0.4 * 0.25) / 1.75;
  EXPECT_NEAR(mean->weight_sum, 1.75, 1e-6);
  ASSERT_EQ(mean->model.size(), 3u);
  EXPECT_NEAR(mean->model[0].tensor[0][0].item<float>(), 1.0 + expected, 1e-5);
  EXPECT_NEAR(mean->model[1].tensor[1].item<float>(), -1.0 - expected, 1e-5);
  // The counter does not travel: the mean keeps the global's.
  EXPECT_EQ(mean->model[2].tensor[0].item<int64_t>(), 7);
  EXPECT_EQ(mean->model[2].tensor.scalar_type(), torch::kLong);
}

TEST(UpdateWords, ChangesAreClippedBeforeTheyAreWeighed) {
  const runtime::NamedTensors global = Model(0, 0, 0);
  auto words = UpdateWords::Create(global, kClip, 32, 2);
  ASSERT_TRUE(words.ok()) << words.status();
  auto far = words->Encode(Model(5.0f, -5.0f, 0), global, 1.0);
  auto near = words->Encode(Model(0.1f, 0.1f, 0), global, 1.0);
  ASSERT_TRUE(far.ok() && near.ok());
  auto mean = words->Decode(PlainSum({*far, *near}), 2, global);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_NEAR(mean->model[0].tensor[0][0].item<float>(), (0.5 + 0.1) / 2, 1e-5);
  EXPECT_NEAR(mean->model[1].tensor[0].item<float>(), (-0.5 + 0.1) / 2, 1e-5);
}

TEST(UpdateWords, SixteenBitsStayWithinAStepPerBoard) {
  const runtime::NamedTensors global = Model(0, 0, 0);
  const uint32_t boards = 8;
  auto words = UpdateWords::Create(global, kClip, 16, boards);
  ASSERT_TRUE(words.ok()) << words.status();
  std::vector<std::vector<uint32_t>> all;
  double sum = 0;
  for (uint32_t i = 0; i < boards; ++i) {
    const float change = -0.45f + 0.11f * static_cast<float>(i);
    sum += change;
    auto encoded = words->Encode(Model(change, change, 0), global, 1.0);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    for (uint32_t word : *encoded) EXPECT_LT(word, 1u << 16);
    all.push_back(*encoded);
  }
  std::vector<uint32_t> total = PlainSum(all);
  for (uint32_t& word : total) word &= 0xFFFF;  // the 16-bit field's sum
  auto mean = words->Decode(total, boards, global);
  ASSERT_TRUE(mean.ok()) << mean.status();
  // Rounding to the nearest level errs by half a step per board.
  const double step = 2 * kClip / (((1 << 16) - 1) / boards);
  EXPECT_NEAR(mean->model[0].tensor[0][0].item<float>(), sum / boards,
              step * boards / 2 + 1e-6);
}

TEST(UpdateWords, RefusesWhatItCannotEncode) {
  const runtime::NamedTensors global = Model(0, 0, 0);
  auto words = UpdateWords::Create(global, kClip, 32, 2);
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_THAT(words->Encode(Model(0, 0, 0), global, 0).status().message(),
              HasSubstr("weight must be in (0, 1]"));
  EXPECT_THAT(words->Encode(Model(0, 0, 0), global, 1.5).status().message(),
              HasSubstr("weight must be in (0, 1]"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(words->Encode(Model(nan, 0, 0), global, 1.0).ok());
  runtime::NamedTensors other = {{"w", torch::zeros({4})}};
  EXPECT_THAT(words->Encode(other, global, 1.0).status().message(),
              HasSubstr("the update has 4 floating values; the session's "
                        "model has 8"));
}

TEST(UpdateWords, RefusesSumsItCannotDecode) {
  const runtime::NamedTensors global = Model(0, 0, 0);
  auto words = UpdateWords::Create(global, kClip, 32, 2);
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_THAT(
      words->Decode(std::vector<uint32_t>(3, 0), 2, global).status().message(),
      HasSubstr("the unmasked sum has 3 words; expected 9"));
  // All levels 0: the weights sum to -2, no mean to take.
  const std::vector<uint32_t> nothing(words->vector_length(), 0);
  EXPECT_FALSE(words->Decode(nothing, 2, global).ok());
}

TEST(UpdateWords, RefusesAModelWithoutFloatingValues) {
  runtime::NamedTensors counters = {{"steps", torch::zeros({3}, torch::kLong)}};
  auto words = UpdateWords::Create(counters, kClip, 32, 2);
  ASSERT_FALSE(words.ok());
  EXPECT_THAT(words.status().message(), HasSubstr("this one has 0"));
}

// Under differential privacy: boards weigh 1, a last word counts who was
// clipped, and the gateway takes the unweighted sum to add its noise to.
TEST(UpdateWords, UnderDpTheSumIsUnweightedAndCountsTheClipped) {
  const runtime::NamedTensors global = Model(1.0f, -1.0f, 7);
  auto words = UpdateWords::Create(global, kClip, 32, 3,
                                   /*count_clipped=*/true);
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(words->vector_length(), 6u + 2u + 2u);
  EXPECT_DOUBLE_EQ(words->clip(), kClip);
  const std::vector<float> changes = {0.2f, -0.1f, 0.4f};
  const std::vector<bool> clipped = {false, true, true};
  std::vector<std::vector<uint32_t>> all;
  for (size_t i = 0; i < changes.size(); ++i) {
    auto encoded =
        words->Encode(Model(1.0f + changes[i], -1.0f - changes[i], 99), global,
                      1.0, clipped[i]);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    all.push_back(*encoded);
  }
  auto sum = words->DecodeSum(PlainSum(all), 3, global);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->clipped, 2);
  EXPECT_NEAR(sum->weight_sum, 3.0, 1e-6);
  // The global plus the three changes, not their mean.
  EXPECT_NEAR(sum->total[0].tensor[1][2].item<float>(), 1.0 + 0.5, 1e-5);
  EXPECT_NEAR(sum->total[1].tensor[0].item<float>(), -1.0 - 0.5, 1e-5);
  EXPECT_EQ(sum->total[2].tensor[0].item<int64_t>(), 7);
  // The mean of the same words is still there for a job without noise.
  auto mean = words->Decode(PlainSum(all), 3, global);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_NEAR(mean->model[0].tensor[0][0].item<float>(), 1.0 + 0.5 / 3, 1e-5);
}

TEST(UpdateWords, UnderDpASumOfOtherWeightsOrCountsIsRefused) {
  const runtime::NamedTensors global = Model(0, 0, 0);
  auto words = UpdateWords::Create(global, kClip, 32, 2, true);
  ASSERT_TRUE(words.ok()) << words.status();
  // A board that weighed 0.25 instead of 1.
  auto honest = words->Encode(Model(0.1f, 0.1f, 0), global, 1.0, false);
  auto light = words->Encode(Model(0.1f, 0.1f, 0), global, 0.25, false);
  ASSERT_TRUE(honest.ok() && light.ok());
  EXPECT_THAT(words->DecodeSum(PlainSum({*honest, *light}), 2, global)
                  .status()
                  .message(),
              HasSubstr("each board weighs 1"));
  // A clipped word of 3 boards' worth from 2 boards: words that no honest
  // pair makes (the last word's levels moved by hand).
  std::vector<uint32_t> forged = PlainSum({*honest, *honest});
  auto one = words->Encode(Model(0, 0, 0), global, 1.0, true);
  auto zero = words->Encode(Model(0, 0, 0), global, 1.0, false);
  ASSERT_TRUE(one.ok() && zero.ok());
  forged.back() += 3 * (one->back() - zero->back());
  EXPECT_THAT(words->DecodeSum(forged, 2, global).status().message(),
              HasSubstr("clipped words sum to"));
  // Without count_clipped the sum of weighted updates means nothing.
  auto weighted = UpdateWords::Create(global, kClip, 32, 2);
  ASSERT_TRUE(weighted.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      weighted->DecodeSum(PlainSum({*honest, *honest}), 2, global).status()));
}

}  // namespace
}  // namespace fedberry::secagg
