#include "runtime/holdout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace fedberry::runtime::holdout_test {
namespace {

// Row i holds the value i and the label i % 3.
class Counting final : public Dataset {
 public:
  explicit Counting(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  const std::vector<int64_t>& sample_shape() const override { return shape_; }
  int64_t label_count() const override { return 3; }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    for (int64_t i = 0; i < n; ++i) {
      inputs[i] = static_cast<float>(rows[i]);
      labels[i] = static_cast<float>(rows[i] % 3);
    }
  }
  std::string Describe() const override { return "counting"; }

 private:
  int64_t n_;
  std::vector<int64_t> shape_{1};
};

std::vector<int64_t> RowsOf(const Dataset& d) {
  std::vector<int64_t> rows(d.size()), all(d.size());
  std::vector<float> in(d.size()), labels(d.size());
  for (int64_t i = 0; i < d.size(); ++i) all[i] = i;
  d.Read(all.data(), d.size(), in.data(), labels.data());
  for (int64_t i = 0; i < d.size(); ++i) rows[i] = static_cast<int64_t>(in[i]);
  return rows;
}

TEST(Holdout, HoldsOutTheAskedShareOfDisjointRows) {
  auto data = std::make_shared<Counting>(1000);
  absl::StatusOr<HoldoutSplit> split = SplitHoldout(data, 0.2, 7);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->holdout->size(), 200);
  EXPECT_EQ(split->train->size(), 800);
  std::set<int64_t> seen;
  for (int64_t r : RowsOf(*split->holdout)) seen.insert(r);
  for (int64_t r : RowsOf(*split->train)) {
    EXPECT_FALSE(seen.count(r)) << "row " << r << " is in both shares";
    seen.insert(r);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(split->holdout->label_count(), 3);
}

TEST(Holdout, TheSameSeedHoldsOutTheSameRowsAndAnotherSeedOthers) {
  absl::StatusOr<std::vector<int64_t>> a = HoldoutRows(500, 0.1, 42);
  absl::StatusOr<std::vector<int64_t>> b = HoldoutRows(500, 0.1, 42);
  absl::StatusOr<std::vector<int64_t>> c = HoldoutRows(500, 0.1, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_TRUE(std::is_sorted(a->begin(), a->end()));
  // Not a prefix or a stride: spread over the data.
  EXPECT_LT(a->front(), 100);
  EXPECT_GT(a->back(), 400);
}

TEST(Holdout, SmallBoardsKeepOneRowOnEachSide) {
  absl::StatusOr<std::vector<int64_t>> two = HoldoutRows(2, 0.01, 1);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 1u);
  absl::StatusOr<std::vector<int64_t>> most = HoldoutRows(3, 0.99, 1);
  ASSERT_TRUE(most.ok());
  EXPECT_EQ(most->size(), 2u);
}

TEST(Holdout, RefusesAShareOutsideTheOpenIntervalOrTooFewRows) {
  EXPECT_EQ(HoldoutRows(100, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HoldoutRows(100, 1, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HoldoutRows(100, std::nan(""), 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status one = HoldoutRows(1, 0.5, 1).status();
  EXPECT_EQ(one.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(one.message().find("at least 2"), std::string::npos) << one;
}

}  // namespace
}  // namespace fedberry::runtime::holdout_test
