#include "runtime/binding_values.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fedberry::runtime::binding_values_test {
namespace {

TEST(BindingValues, RefusesANonPositiveStdAndANonFiniteMeanNamingTheSource) {
  DataBinding binding;
  EXPECT_TRUE(CheckNormalisation(binding, "csv file rows.csv").ok());
  binding.std = {0.5f, 0.0f};
  absl::Status s = CheckNormalisation(binding, "csv file rows.csv");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "csv file rows.csv: input std 0 is not a positive number");
  binding.std = {};
  binding.mean = {NAN};
  s = CheckNormalisation(binding, "images:dir");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("images:dir: input mean"), std::string::npos) << s;
}

TEST(BindingValues, GivesOneValuePerUnit) {
  auto none = PerUnit({}, 1.0f, 3, "std", "channel", "images:dir");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, (std::vector<float>{1, 1, 1}));
  auto one = PerUnit({0.5f}, 0.0f, 2, "mean", "feature", "csv file f");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (std::vector<float>{0.5f, 0.5f}));
  auto each = PerUnit({1, 2}, 0.0f, 2, "mean", "feature", "csv file f");
  ASSERT_TRUE(each.ok());
  EXPECT_EQ(*each, (std::vector<float>{1, 2}));
  auto bad = PerUnit({1, 2}, 0.0f, 3, "mean", "channel", "images:dir");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "images:dir: the input mean has 2 values; it needs 1 or one per "
            "channel (3)");
}

TEST(BindingValues, NamesTheShardOneBased) {
  PartitionSpec iid;
  iid.index = 1;
  iid.count = 4;
  EXPECT_EQ(ShardText(iid), " (shard 2 of 4, iid)");
  PartitionSpec dirichlet = iid;
  dirichlet.kind = PartitionSpec::Kind::kDirichlet;
  EXPECT_EQ(ShardText(dirichlet), " (shard 2 of 4, dirichlet)");
}

}  // namespace
}  // namespace fedberry::runtime::binding_values_test
