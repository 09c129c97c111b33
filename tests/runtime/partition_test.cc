#include "runtime/partition.h"

#include <gtest/gtest.h>

#include <set>

namespace fedberry::runtime::partition_test {
namespace {

std::vector<uint8_t> Labels(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 7) % 10);
  return v;
}

void ExpectDisjointAndComplete(const std::vector<std::vector<int64_t>>& shards,
                               size_t rows) {
  std::set<int64_t> seen;
  size_t total = 0;
  for (const auto& s : shards) {
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    for (int64_t r : s) {
      EXPECT_TRUE(seen.insert(r).second) << "row " << r << " in two shards";
      EXPECT_GE(r, 0);
      EXPECT_LT(r, static_cast<int64_t>(rows));
    }
    total += s.size();
  }
  EXPECT_EQ(total, rows);
}

TEST(Partition, IidIsDisjointCompleteAndBalanced) {
  PartitionSpec spec;
  spec.count = 7;
  auto shards = PartitionAll(Labels(1000), spec);
  ASSERT_TRUE(shards.ok());
  ExpectDisjointAndComplete(*shards, 1000);
  for (const auto& s : *shards) {
    EXPECT_GE(s.size(), 142u);
    EXPECT_LE(s.size(), 143u);
  }
}

TEST(Partition, SameSeedSameSplitOtherSeedOtherSplit) {
  PartitionSpec spec;
  spec.count = 4;
  spec.seed = 9;
  auto a = PartitionAll(Labels(500), spec);
  auto b = PartitionAll(Labels(500), spec);
  spec.seed = 10;
  auto c = PartitionAll(Labels(500), spec);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  spec.kind = PartitionSpec::Kind::kDirichlet;
  EXPECT_EQ(*PartitionAll(Labels(500), spec), *PartitionAll(Labels(500), spec));
}

TEST(Partition, PartitionRowsIsThatShardOfAll) {
  PartitionSpec spec;
  spec.count = 3;
  spec.index = 2;
  spec.kind = PartitionSpec::Kind::kDirichlet;
  auto all = PartitionAll(Labels(300), spec);
  auto mine = PartitionRows(Labels(300), spec);
  ASSERT_TRUE(all.ok() && mine.ok());
  EXPECT_EQ((*all)[2], *mine);
}

TEST(Partition, DirichletIsDisjointCompleteAndSkewed) {
  const auto labels = Labels(5000);
  PartitionSpec spec;
  spec.kind = PartitionSpec::Kind::kDirichlet;
  spec.count = 5;
  spec.alpha = 0.1;
  auto shards = PartitionAll(labels, spec);
  ASSERT_TRUE(shards.ok());
  ExpectDisjointAndComplete(*shards, labels.size());
  // With a small alpha most shards are dominated by few classes: the largest
  // class share per shard is far above the IID 10%.
  double mean_top_share = 0;
  for (const auto& s : *shards) {
    ASSERT_FALSE(s.empty());
    std::vector<int> counts(10);
    for (int64_t r : s) ++counts[labels[r]];
    mean_top_share +=
        *std::max_element(counts.begin(), counts.end()) / double(s.size());
  }
  mean_top_share /= shards->size();
  EXPECT_GT(mean_top_share, 0.4);

  // A large alpha is close to IID.
  spec.alpha = 1000;
  shards = PartitionAll(labels, spec);
  ASSERT_TRUE(shards.ok());
  for (const auto& s : *shards) {
    std::vector<int> counts(10);
    for (int64_t r : s) ++counts[labels[r]];
    EXPECT_LT(
        *std::max_element(counts.begin(), counts.end()) / double(s.size()),
        0.2);
  }
}

TEST(Partition, RejectsBadSpecs) {
  PartitionSpec spec;
  spec.count = 0;
  EXPECT_EQ(PartitionAll(Labels(10), spec).status().code(),
            absl::StatusCode::kInvalidArgument);
  spec.count = 2;
  spec.index = 2;
  EXPECT_EQ(PartitionAll(Labels(10), spec).status().code(),
            absl::StatusCode::kInvalidArgument);
  spec.index = 0;
  spec.count = 11;
  EXPECT_EQ(PartitionAll(Labels(10), spec).status().code(),
            absl::StatusCode::kInvalidArgument);
  spec.count = 2;
  spec.kind = PartitionSpec::Kind::kDirichlet;
  spec.alpha = 0;
  EXPECT_EQ(PartitionAll(Labels(10), spec).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParsePartitionKind("random").ok());
}

}  // namespace
}  // namespace fedberry::runtime::partition_test
