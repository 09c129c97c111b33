#include "runtime/update_clip.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace fedberry::runtime::update_clip_test {
namespace {

NamedTensors Model(std::vector<float> weights, int64_t counter = 7) {
  return {{"w", torch::tensor(weights)},
          {"steps", torch::tensor({counter}, torch::kInt64)}};
}

TEST(UpdateClip, MeasuresTheDifferenceOverFloatingTensorsOnly) {
  auto norm = UpdateNorm(Model({3, 4}, 99), Model({0, 0}, 1));
  ASSERT_TRUE(norm.ok()) << norm.status();
  EXPECT_DOUBLE_EQ(*norm, 5.0);  // the integer counter does not count
}

TEST(UpdateClip, ScalesALongUpdateExactlyToTheBound) {
  NamedTensors model = Model({3, 4}, 99);
  auto before = ClipUpdate(model, Model({0, 0}), 1.0);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_DOUBLE_EQ(*before, 5.0);
  EXPECT_NEAR(model[0].tensor[0].item<float>(), 0.6f, 1e-7);
  EXPECT_NEAR(model[0].tensor[1].item<float>(), 0.8f, 1e-7);
  EXPECT_EQ(model[1].tensor.item<int64_t>(), 99);  // integers untouched
  auto after = UpdateNorm(model, Model({0, 0}));
  ASSERT_TRUE(after.ok());
  EXPECT_NEAR(*after, 1.0, 1e-6);
}

TEST(UpdateClip, LeavesAnUpdateWithinTheBoundAlone) {
  NamedTensors model = Model({1.5f, 2.0f});
  auto before = ClipUpdate(model, Model({1.0f, 2.0f}), 0.5);
  ASSERT_TRUE(before.ok());
  EXPECT_DOUBLE_EQ(*before, 0.5);
  EXPECT_EQ(model[0].tensor[0].item<float>(), 1.5f);
}

TEST(UpdateClip, RefusesBadBoundsAndLayouts) {
  NamedTensors model = Model({3, 4});
  EXPECT_EQ(ClipUpdate(model, Model({0, 0}), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ClipUpdate(model, Model({0, 0}), NAN).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto shape = UpdateNorm(model, Model({0, 0, 0}));
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(shape.status().message().find("w"), std::string::npos);
  EXPECT_FALSE(UpdateNorm(model, {{"w", torch::zeros({2})}}).ok());
}

TEST(UpdateNoise, SameSeedSameNoiseOfTheAskedDeviation) {
  NamedTensors a = {{"w", torch::zeros({100000})},
                    {"n", torch::tensor({int64_t{3}})}};
  NamedTensors b = a;
  b[0].tensor = a[0].tensor.clone();
  ASSERT_TRUE(AddUpdateNoise(a, 0.5, 9).ok());
  ASSERT_TRUE(AddUpdateNoise(b, 0.5, 9).ok());
  EXPECT_TRUE(torch::equal(a[0].tensor, b[0].tensor));
  // Standard error of the sample's deviation: 0.5 / sqrt(2e5) = 0.0011.
  EXPECT_NEAR(a[0].tensor.std().item<double>(), 0.5, 0.006);
  EXPECT_EQ(a[1].tensor.item<int64_t>(), 3);
  NamedTensors c = {{"w", torch::zeros({100000})}};
  ASSERT_TRUE(AddUpdateNoise(c, 0.5, 10).ok());
  EXPECT_FALSE(torch::equal(a[0].tensor, c[0].tensor));
  EXPECT_FALSE(AddUpdateNoise(c, -1, 1).ok());
}

}  // namespace
}  // namespace fedberry::runtime::update_clip_test
