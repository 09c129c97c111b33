#include "runtime/idx_reader.h"

#include <gtest/gtest.h>

#include "runtime/image_dataset.h"
#include "tests/test_files.h"

namespace fedberry::runtime::idx_reader_test {
namespace {

using testing::IdxBytes;
using testing::TempDir;
using testing::WriteFile;

std::vector<uint8_t> Iota(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i);
  return v;
}

class IdxReaderTest : public ::testing::TestWithParam<bool> {};

TEST_P(IdxReaderTest, ReadsWholeFile) {
  TempDir dir;
  const std::string path = dir / "a.idx";
  WriteFile(path, IdxBytes({4, 2, 3}, Iota(24)), GetParam());
  auto a = ReadIdx(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dims, (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(a->row_size(), 6);
  EXPECT_EQ(a->data, Iota(24));
}

TEST_P(IdxReaderTest, ReadsSelectedRowsOnly) {
  TempDir dir;
  const std::string path = dir / "a.idx";
  WriteFile(path, IdxBytes({4, 2}, Iota(8)), GetParam());
  std::vector<int64_t> rows = {1, 3};
  auto a = ReadIdx(path, &rows);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->data, (std::vector<uint8_t>{2, 3, 6, 7}));
}

TEST_P(IdxReaderTest, TruncatedPayloadNamesFile) {
  TempDir dir;
  const std::string path = dir / "short.idx";
  std::string bytes = IdxBytes({4, 2, 3}, Iota(24));
  bytes.resize(bytes.size() - 5);
  WriteFile(path, bytes, GetParam());
  auto a = ReadIdx(path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("short.idx"), std::string::npos);
  EXPECT_NE(a.status().message().find("truncated"), std::string::npos);
}

TEST_P(IdxReaderTest, TruncatedHeader) {
  TempDir dir;
  const std::string path = dir / "hdr.idx";
  WriteFile(path, IdxBytes({4, 2, 3}, {}).substr(0, 9), GetParam());
  auto a = ReadIdx(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("truncated"), std::string::npos);
}

TEST_P(IdxReaderTest, WrongMagic) {
  TempDir dir;
  const std::string path = dir / "magic.idx";
  std::string bytes = IdxBytes({2, 2}, Iota(4));
  bytes[0] = 0x1f;
  WriteFile(path, bytes, GetParam());
  auto a = ReadIdx(path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("magic"), std::string::npos);
  EXPECT_NE(a.status().message().find("magic.idx"), std::string::npos);
}

TEST_P(IdxReaderTest, WrongElementType) {
  TempDir dir;
  const std::string path = dir / "float.idx";
  std::string bytes = IdxBytes({2, 2}, Iota(4));
  bytes[2] = 0x0d;  // float
  WriteFile(path, bytes, GetParam());
  auto a = ReadIdx(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("element type"), std::string::npos);
}

TEST_P(IdxReaderTest, TrailingBytes) {
  TempDir dir;
  const std::string path = dir / "long.idx";
  WriteFile(path, IdxBytes({2, 2}, Iota(4)) + "xx", GetParam());
  auto a = ReadIdx(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("after its declared"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, IdxReaderTest, ::testing::Bool());

TEST(IdxReader, MissingFileIsNotFound) {
  auto a = ReadIdx("/nonexistent/fedberry/file.idx");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(a.status().message().find("/nonexistent/fedberry/file.idx"),
            std::string::npos);
}

TEST(IdxReader, RowSelectionOutOfRange) {
  TempDir dir;
  WriteFile(dir / "a.idx", IdxBytes({2, 2}, Iota(4)), false);
  std::vector<int64_t> rows = {0, 5};
  EXPECT_EQ(ReadIdx(dir / "a.idx", &rows).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ImageDataset, LoadsPartitionOnly) {
  TempDir dir;
  testing::WriteTinyDataset(dir.path(), 40);
  PartitionSpec spec;
  spec.index = 1;
  spec.count = 4;
  auto part = LoadIdxDataset(dir.path(), Split::kTrain, &spec);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(part->rows, 10);
  EXPECT_EQ(part->pixels.size(), 10u * 28 * 28);
  auto rows = PartitionRows(std::vector<uint8_t>(40), spec);
  ASSERT_TRUE(rows.ok());
  for (size_t i = 0; i < rows->size(); ++i) {
    EXPECT_EQ(part->labels[i], (*rows)[i] % 10);
  }
}

TEST(ImageDataset, CountMismatchBetweenImagesAndLabels) {
  TempDir dir;
  testing::WriteTinyDataset(dir.path(), 20);
  WriteFile(dir / "train-labels-idx1-ubyte.gz",
            IdxBytes({19}, std::vector<uint8_t>(19)), true);
  auto d = LoadIdxDataset(dir.path(), Split::kTrain);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("19 labels"), std::string::npos);
}

TEST(ImageDataset, MissingFolderNamesTheFile) {
  auto d = LoadIdxDataset("/nonexistent/data", Split::kTest);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(d.status().message().find("t10k-labels"), std::string::npos);
}

}  // namespace
}  // namespace fedberry::runtime::idx_reader_test
