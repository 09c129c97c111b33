#include "client/update_attack.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace fedberry::client {
namespace {

TEST(UpdateAttack, ParsesScaleAndSignFlip) {
  auto none = ParseUpdateAttack("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  auto scale = ParseUpdateAttack("scale:10");
  ASSERT_TRUE(scale.ok()) << scale.status();
  EXPECT_EQ((*scale)->factor, 10);

  auto flip = ParseUpdateAttack("signflip");
  ASSERT_TRUE(flip.ok()) << flip.status();
  EXPECT_EQ((*flip)->factor, -1);

  auto flip4 = ParseUpdateAttack("signflip:4");
  ASSERT_TRUE(flip4.ok()) << flip4.status();
  EXPECT_EQ((*flip4)->factor, -4);
  EXPECT_EQ((*flip4)->spec, "signflip:4");
}

TEST(UpdateAttack, RefusesMalformedSpecsNamingThem) {
  for (const char* bad : {"scale", "scale:", "scale:0", "scale:x", "scale:inf",
                          "signflip:", "signflipx", "flip:2", "scale:nan"}) {
    auto a = ParseUpdateAttack(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find(bad), std::string::npos) << a.status();
  }
}

TEST(UpdateAttack, ScalesTheUpdateNotTheModelAndLeavesTheTrainerAlone) {
  const runtime::NamedTensors global = {{"w", at::tensor({1.0f, 2.0f, 3.0f})},
                                        {"steps", at::tensor({7}, at::kLong)}};
  at::Tensor trained = at::tensor({2.0f, 2.0f, 1.0f});
  runtime::NamedTensors model = {{"w", trained},
                                 {"steps", at::tensor({9}, at::kLong)}};

  ASSERT_TRUE(ApplyUpdateAttack({-3, "signflip:3"}, global, &model).ok());
  // global + (-3) * ([2,2,1] - [1,2,3]) = [1,2,3] + [-3,0,6]
  EXPECT_TRUE(at::equal(model[0].tensor, at::tensor({-2.0f, 2.0f, 9.0f})))
      << model[0].tensor;
  EXPECT_EQ(model[1].tensor.item<int64_t>(), 9);  // integer tensors kept
  EXPECT_TRUE(at::equal(trained, at::tensor({2.0f, 2.0f, 1.0f})));
}

TEST(UpdateAttack, RefusesAnotherLayout) {
  const runtime::NamedTensors global = {{"w", at::zeros({3})}};
  runtime::NamedTensors shorter;
  EXPECT_FALSE(ApplyUpdateAttack({10, "scale:10"}, global, &shorter).ok());
  runtime::NamedTensors other_shape = {{"w", at::zeros({2})}};
  auto s = ApplyUpdateAttack({10, "scale:10"}, global, &other_shape);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s;
}

}  // namespace
}  // namespace fedberry::client
