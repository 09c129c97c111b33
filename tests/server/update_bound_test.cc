#include "server/update_bound.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

namespace fedberry::server::update_bound_test {
namespace {

using runtime::NamedTensors;

// The distance in float64 the slow way, for comparison.
double Reference(const NamedTensors& update, const NamedTensors& global) {
  double sum = 0;
  for (size_t i = 0; i < update.size(); ++i) {
    sum += (update[i].tensor.to(at::kDouble) - global[i].tensor.to(at::kDouble))
               .pow(2)
               .sum()
               .item<double>();
  }
  return std::sqrt(sum);
}

TEST(UpdateBound, MeasuresTheDistanceInFloat64WhateverTheLayout) {
  at::manual_seed(5);
  // Odd sizes (the four-way sums' tail), a float64 tensor, and an update
  // whose tensor is a non-contiguous view.
  auto global = std::make_shared<const NamedTensors>(
      NamedTensors{{"w", at::randn({37, 11})},
                   {"b", at::randn({3})},
                   {"d", at::randn({5}, at::kDouble)}});
  NamedTensors update = {{"w", at::randn({11, 37}).t()},
                         {"b", at::randn({3})},
                         {"d", at::randn({5}, at::kDouble)}};
  UpdateBound bound(global, 1000);
  auto ratio = bound.Check(update);
  ASSERT_TRUE(ratio.ok()) << ratio.status();
  EXPECT_NEAR(*ratio * bound.scale(), Reference(update, *global), 1e-9);
  // Far beyond the bound: refused.
  update[1].tensor.fill_(1e30);
  UpdateBound tight(global, 10);
  EXPECT_EQ(tight.Check(update).status().code(),
            absl::StatusCode::kInvalidArgument);
  // NaN is never within a bound.
  update[1].tensor.fill_(NAN);
  EXPECT_FALSE(bound.Check(update).ok());
}

}  // namespace
}  // namespace fedberry::server::update_bound_test
