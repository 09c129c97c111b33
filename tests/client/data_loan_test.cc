#include "client/data_loan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace fedberry::client::data_loan_test {
namespace {

// Row r's pixels are all r (mod 256) and its label r % 10.
runtime::ImageDataset Rows(int64_t rows, uint8_t base = 0) {
  runtime::ImageDataset d;
  d.rows = rows;
  d.height = 2;
  d.width = 2;
  for (int64_t r = 0; r < rows; ++r) {
    for (int i = 0; i < 4; ++i) d.pixels.push_back(base + r);
    d.labels.push_back(r % 10);
  }
  return d;
}

TEST(DataLoan, LentRowsAreDistinctSeededAndLendingLessIsAPrefix) {
  auto all = LentRows(100, 100, 7);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(std::set<int64_t>(all->begin(), all->end()).size(), 100u);
  auto some = LentRows(100, 30, 7);
  ASSERT_TRUE(some.ok());
  EXPECT_TRUE(std::equal(some->begin(), some->end(), all->begin()));
  EXPECT_EQ(*LentRows(100, 30, 7), *some);  // same seed, same rows
  EXPECT_NE(*LentRows(100, 30, 8), *some);
  std::vector<int64_t> first30(30);
  std::iota(first30.begin(), first30.end(), 0);
  EXPECT_NE(*some, first30);  // shuffled, not the shard's first rows
  auto too_many = LentRows(10, 11, 7);
  EXPECT_TRUE(absl::IsInvalidArgument(too_many.status()));
  EXPECT_NE(too_many.status().message().find("holds 10"), std::string::npos);
}

TEST(DataLoan, RoundDatasetDropsLentRowsAndAppendsReceivedOnes) {
  const runtime::ImageDataset own = Rows(6);
  const runtime::ImageDataset received = Rows(2, 100);
  auto d = RoundDataset(own, {4, 1}, {received}, 10);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->rows, 6);
  std::vector<int> first_pixels;
  for (int64_t r = 0; r < d->rows; ++r)
    first_pixels.push_back(d->pixels[r * 4]);
  EXPECT_EQ(first_pixels, (std::vector<int>{0, 2, 3, 5, 100, 101}));
  EXPECT_EQ(d->labels, (std::vector<uint8_t>{0, 2, 3, 5, 0, 1}));
  EXPECT_EQ(d->pixels.size(), 24u);
}

TEST(DataLoan, RoundDatasetRefusesBadReceivedSamples) {
  const runtime::ImageDataset own = Rows(4);
  runtime::ImageDataset other_shape = Rows(1);
  other_shape.height = 1;
  other_shape.width = 4;
  auto s = RoundDataset(own, {}, {other_shape}, 10);
  EXPECT_TRUE(absl::IsInvalidArgument(s.status()));
  EXPECT_NE(s.status().message().find("1x4"), std::string::npos);
  runtime::ImageDataset bad_label = Rows(1);
  bad_label.labels[0] = 12;
  s = RoundDataset(own, {}, {bad_label}, 10);
  EXPECT_TRUE(absl::IsInvalidArgument(s.status()));
  EXPECT_NE(s.status().message().find("label 12"), std::string::npos);
  s = RoundDataset(own, {4}, {}, 10);
  EXPECT_TRUE(absl::IsInvalidArgument(s.status()));
}

}  // namespace
}  // namespace fedberry::client::data_loan_test
