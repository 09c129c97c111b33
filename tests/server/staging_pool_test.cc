#include "server/staging_pool.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace fedberry::server::staging_pool_test {
namespace {

runtime::NamedTensors Set() { return {{"w", at::zeros({2, 3})}}; }

TEST(StagingPool, GivesBackWhatItWasGivenUpToItsSize) {
  StagingPool pool(1);
  EXPECT_TRUE(pool.Take().empty());
  runtime::NamedTensors first = Set();
  const void* bytes = first[0].tensor.data_ptr();
  pool.Give(std::move(first));
  pool.Give(Set());  // beyond its size: dropped
  EXPECT_EQ(pool.idle(), 1);
  runtime::NamedTensors again = pool.Take();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].tensor.data_ptr(), bytes);
  EXPECT_TRUE(pool.Take().empty());
}

// Refilled in place later, a set still seen elsewhere would change under
// whoever holds it: it is not kept.
TEST(StagingPool, KeepsNoTensorThatIsStillShared) {
  StagingPool pool(4);
  runtime::NamedTensors shared = Set();
  at::Tensor kept = shared[0].tensor;
  pool.Give(std::move(shared));
  runtime::NamedTensors viewed = Set();
  at::Tensor view = viewed[0].tensor.view({3, 2});
  pool.Give(std::move(viewed));
  EXPECT_EQ(pool.idle(), 0);
  kept.reset();
  view.reset();
  pool.Give(Set());
  EXPECT_EQ(pool.idle(), 1);
}

}  // namespace
}  // namespace fedberry::server::staging_pool_test
