#include "server/strategy/fedavg.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace fedberry::server::fedavg_test {
namespace {

using runtime::NamedTensors;

NamedTensors Model(float w0, float w1, float b) {
  return {{"w", at::tensor({w0, w1})}, {"b", at::tensor({b})}};
}

TEST(FedAvg, WeightedAverageMatchesHandComputed) {
  FedAvg avg(Model(0, 0, 0));
  ASSERT_TRUE(avg.Add(Model(1, 2, 3), 1).ok());
  ASSERT_TRUE(avg.Add(Model(4, 8, -3), 3).ok());
  auto r = avg.Result();
  ASSERT_TRUE(r.ok());
  // (1*1 + 3*4)/4 = 3.25, (1*2 + 3*8)/4 = 6.5, (3 - 9)/4 = -1.5
  EXPECT_FLOAT_EQ((*r)[0].tensor[0].item<float>(), 3.25f);
  EXPECT_FLOAT_EQ((*r)[0].tensor[1].item<float>(), 6.5f);
  EXPECT_FLOAT_EQ((*r)[1].tensor[0].item<float>(), -1.5f);
  EXPECT_EQ(avg.updates(), 2);
  EXPECT_DOUBLE_EQ(avg.total_weight(), 4);
}

TEST(FedAvg, ThreeUnequalWeights) {
  FedAvg avg(Model(0, 0, 0));
  ASSERT_TRUE(avg.Add(Model(10, 0, 1), 100).ok());
  ASSERT_TRUE(avg.Add(Model(20, 0, 1), 300).ok());
  ASSERT_TRUE(avg.Add(Model(40, 5, 1), 600).ok());
  auto r = avg.Result();
  ASSERT_TRUE(r.ok());
  // (1000 + 6000 + 24000) / 1000 = 31, 3000/1000 = 3
  EXPECT_FLOAT_EQ((*r)[0].tensor[0].item<float>(), 31.f);
  EXPECT_FLOAT_EQ((*r)[0].tensor[1].item<float>(), 3.f);
  EXPECT_FLOAT_EQ((*r)[1].tensor[0].item<float>(), 1.f);
}

TEST(FedAvg, SingleClientIsItsOwnModel) {
  FedAvg avg(Model(0, 0, 0));
  ASSERT_TRUE(avg.Add(Model(1.5f, -2, 7), 42).ok());
  auto r = avg.Result();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[0].tensor.equal(at::tensor({1.5f, -2.f})));
  EXPECT_TRUE((*r)[1].tensor.equal(at::tensor({7.f})));
}

TEST(FedAvg, IntegerBuffersAreRoundedAndKeepTheirDtype) {
  NamedTensors ref = {{"n", at::tensor({0}, at::kLong)}};
  FedAvg avg(ref);
  ASSERT_TRUE(avg.Add({{"n", at::tensor({10}, at::kLong)}}, 1).ok());
  ASSERT_TRUE(avg.Add({{"n", at::tensor({13}, at::kLong)}}, 1).ok());
  auto r = avg.Result();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].tensor.scalar_type(), at::kLong);
  EXPECT_EQ((*r)[0].tensor[0].item<int64_t>(), 12);  // 11.5 rounds to even
}

TEST(FedAvg, BadUpdatesAreRefusedAndChangeNothing) {
  FedAvg avg(Model(0, 0, 0));
  ASSERT_TRUE(avg.Add(Model(2, 2, 2), 1).ok());
  NamedTensors nan = Model(1, 1, 1);
  nan[0].tensor[1] = std::numeric_limits<float>::quiet_NaN();
  NamedTensors inf = Model(1, 1, 1);
  inf[1].tensor[0] = -std::numeric_limits<float>::infinity();
  NamedTensors renamed = Model(1, 1, 1);
  renamed[1].name = "bias";
  NamedTensors reshaped = Model(1, 1, 1);
  reshaped[0].tensor = at::zeros({3});
  NamedTensors retyped = Model(1, 1, 1);
  retyped[1].tensor = at::tensor({1.0}, at::kDouble);
  NamedTensors short_model = {Model(1, 1, 1)[0]};
  for (const auto* bad :
       {&nan, &inf, &renamed, &reshaped, &retyped, &short_model}) {
    EXPECT_EQ(avg.Add(*bad, 1).code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(avg.Add(Model(1, 1, 1), 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(avg.updates(), 1);
  auto r = avg.Result();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[0].tensor.equal(at::tensor({2.f, 2.f})));
}

TEST(FedAvg, NoUpdateIsFailedPrecondition) {
  FedAvg avg(Model(0, 0, 0));
  EXPECT_EQ(avg.Result().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fedberry::server::fedavg_test
