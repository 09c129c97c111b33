#include "runtime/row_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_files.h"

namespace fedberry::runtime::row_cache_test {
namespace {

using testing::TempDir;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Names in `dir`, to see what a writer left behind.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void WriteFloats(const std::string& path, uint64_t key, int64_t rows,
                 const std::string& metadata = "meta") {
  auto w = RowCacheWriter::Open(path, key, 3, metadata);
  ASSERT_TRUE(w.ok()) << w.status();
  for (int64_t r = 0; r < rows; ++r) {
    const float rec[3] = {static_cast<float>(r), r * 0.5f, -1.0f * r};
    ASSERT_TRUE(w->Append(rec).ok());
  }
  ASSERT_TRUE(w->Finish().ok());
}

TEST(RowCache, WritesAndMapsFloatRecords) {
  TempDir dir;
  const std::string path = dir / "a.rows";
  WriteFloats(path, 42, 5, "hello\nworld");
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"a.rows"});
  auto cache = RowCache::Open(path, 42);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const RowCache& c = **cache;
  EXPECT_EQ(c.rows(), 5);
  EXPECT_EQ(c.values_per_record(), 3);
  EXPECT_EQ(c.type(), RowValueType::kFloat32);
  EXPECT_EQ(c.key(), 42u);
  EXPECT_EQ(c.metadata(), "hello\nworld");
  EXPECT_EQ(c.path(), path);
  for (int64_t r = 0; r < 5; ++r) {
    EXPECT_EQ(c.record(r)[0], static_cast<float>(r));
    EXPECT_EQ(c.record(r)[1], r * 0.5f);
    EXPECT_EQ(c.record(r)[2], -1.0f * r);
  }
  // Records start on an aligned offset, so float reads are aligned.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.record(0)) % alignof(float), 0u);
  // 64-byte header, 5 * 3 floats, then the metadata: nothing else.
  EXPECT_EQ(std::filesystem::file_size(path), 64u + 5 * 3 * 4 + 11);
}

TEST(RowCache, Uint8RecordsTakeOneBytePerValue) {
  TempDir dir;
  const std::string path = dir / "u8.rows";
  auto w = RowCacheWriter::Open(path, 7, 4, "", RowValueType::kUint8);
  ASSERT_TRUE(w.ok()) << w.status();
  const uint8_t a[4] = {0, 1, 2, 255}, b[4] = {9, 8, 7, 6};
  ASSERT_TRUE(w->Append(a).ok());
  ASSERT_TRUE(w->Append(b).ok());
  // A float record into a uint8 cache is refused.
  const float f[4] = {};
  EXPECT_EQ(w->Append(f).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(std::filesystem::file_size(path), 64u + 8);
  auto cache = RowCache::Open(path, 7);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ((*cache)->type(), RowValueType::kUint8);
  EXPECT_EQ((*cache)->rows(), 2);
  EXPECT_EQ(
      std::vector<uint8_t>((*cache)->record_u8(1), (*cache)->record_u8(1) + 4),
      (std::vector<uint8_t>{9, 8, 7, 6}));
  EXPECT_EQ((*cache)->record_u8(0)[3], 255);
}

TEST(RowCache, ManyRecordsCrossTheWriteBuffer) {
  TempDir dir;
  const std::string path = dir / "big.rows";
  WriteFloats(path, 1, 200000);  // 2.4 MB, more than one 1 MiB buffer
  auto cache = RowCache::Open(path, 1);
  ASSERT_TRUE(cache.ok()) << cache.status();
  ASSERT_EQ((*cache)->rows(), 200000);
  for (int64_t r : {0, 87381, 87382, 199999}) {
    EXPECT_EQ((*cache)->record(r)[0], static_cast<float>(r)) << r;
  }
}

TEST(RowCache, EmptyCacheIsValid) {
  TempDir dir;
  WriteFloats(dir / "e.rows", 3, 0, "");
  auto cache = RowCache::Open(dir / "e.rows", 3);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ((*cache)->rows(), 0);
}

TEST(RowCache, MissingFileIsNotFound) {
  TempDir dir;
  auto cache = RowCache::Open(dir / "none.rows", 1);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(cache.status().message().find("none.rows"), std::string::npos);
}

TEST(RowCache, RefusesAnotherKey) {
  TempDir dir;
  WriteFloats(dir / "k.rows", 0x1234, 2);
  auto cache = RowCache::Open(dir / "k.rows", 0x9999);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cache.status().message().find("k.rows"), std::string::npos);
  EXPECT_NE(cache.status().message().find("0000000000001234"),
            std::string::npos)
      << cache.status();
  EXPECT_NE(cache.status().message().find("0000000000009999"),
            std::string::npos);
}

TEST(RowCache, RefusesWrongMagicAndVersion) {
  TempDir dir;
  const std::string path = dir / "m.rows";
  WriteFloats(path, 5, 2);
  std::string bytes = ReadBytes(path);

  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  WriteBytes(path, bad_magic);
  auto cache = RowCache::Open(path, 5);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("not a fedberry row cache"),
            std::string::npos)
      << cache.status();

  std::string bad_version = bytes;
  bad_version[8] = 2;  // version is the u32 at offset 8
  WriteBytes(path, bad_version);
  cache = RowCache::Open(path, 5);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("version 2"), std::string::npos)
      << cache.status();

  WriteBytes(path, "some text file\n");
  cache = RowCache::Open(path, 5);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RowCache, RefusesTruncatedAndTrailingBytes) {
  TempDir dir;
  const std::string path = dir / "t.rows";
  WriteFloats(path, 5, 4, "md");
  const std::string bytes = ReadBytes(path);

  WriteBytes(path, bytes.substr(0, bytes.size() - 7));
  auto cache = RowCache::Open(path, 5);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cache.status().message().find("truncated"), std::string::npos)
      << cache.status();

  WriteBytes(path, bytes.substr(0, 30));  // inside the header
  cache = RowCache::Open(path, 5);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("truncated"), std::string::npos)
      << cache.status();

  WriteBytes(path, bytes + "xyz");
  cache = RowCache::Open(path, 5);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.status().message().find("3 trailing bytes"),
            std::string::npos)
      << cache.status();
}

TEST(RowCache, UnfinishedWriterLeavesNothing) {
  TempDir dir;
  {
    auto w = RowCacheWriter::Open(dir / "x.rows", 1, 2);
    ASSERT_TRUE(w.ok()) << w.status();
    const float rec[2] = {1, 2};
    ASSERT_TRUE(w->Append(rec).ok());
    EXPECT_EQ(Names(dir.path()).size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(Names(dir.path()).empty());
}

TEST(RowCache, FinishReplacesAnOldFileAtomically) {
  TempDir dir;
  const std::string path = dir / "r.rows";
  WriteFloats(path, 1, 2);
  auto old = RowCache::Open(path, 1);
  ASSERT_TRUE(old.ok());
  WriteFloats(path, 2, 3);
  // The old mapping still reads the old file; a new open sees the new one.
  EXPECT_EQ((*old)->rows(), 2);
  EXPECT_EQ((*old)->record(1)[0], 1.0f);
  auto fresh = RowCache::Open(path, 2);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)->rows(), 3);
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"r.rows"});
}

TEST(RowCache, MovedCacheStillReads) {
  TempDir dir;
  WriteFloats(dir / "mv.rows", 1, 3);
  auto cache = RowCache::Open(dir / "mv.rows", 1);
  ASSERT_TRUE(cache.ok());
  RowCache moved = std::move(**cache);
  cache->reset();  // destroying the moved-from object must not unmap
  EXPECT_EQ(moved.rows(), 3);
  EXPECT_EQ(moved.record(2)[0], 2.0f);
}

TEST(RowCache, WriterInMissingFolderNamesThePath) {
  TempDir dir;
  auto w = RowCacheWriter::Open(dir / "no/such/x.rows", 1, 1);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("no/such/x.rows"), std::string::npos)
      << w.status();
}

TEST(RowCache, FindAndOpenWriterTryPlacesInOrder) {
  TempDir dir;
  const std::string first = dir / "first.rows";
  const std::string second = dir / "sub/second.rows";
  auto any = [](const RowCache&) { return true; };
  EXPECT_EQ(FindRowCache({first, second}, 9, any), nullptr);

  // The first place cannot be written (its folder is a file): the writer
  // falls back to the second, creating its folder.
  WriteBytes(dir / "file", "x");
  auto w = OpenRowCacheWriter({dir / "file/a.rows", second}, 9, 1,
                              RowValueType::kFloat32);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->path(), second);
  const float v = 4;
  ASSERT_TRUE(w->Append(&v).ok());
  ASSERT_TRUE(w->Finish().ok());

  // A damaged file at the first place is passed over.
  WriteBytes(first, "garbage");
  auto found = FindRowCache({first, second}, 9, any);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->path(), second);
  // `usable` can refuse a valid cache too.
  EXPECT_EQ(FindRowCache({first, second}, 9,
                         [](const RowCache& c) { return c.rows() > 1; }),
            nullptr);
  EXPECT_EQ(FindRowCache({first, second}, 10, any), nullptr);

  // Nowhere to write: the error names every place.
  auto none = OpenRowCacheWriter({dir / "file/a.rows", dir / "file/b.rows"}, 9,
                                 1, RowValueType::kFloat32);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("file/a.rows"), std::string::npos)
      << none.status();
  EXPECT_NE(none.status().message().find("file/b.rows"), std::string::npos);
}

TEST(RowCache, KeyFieldsAreLengthPrefixed) {
  const uint64_t ab_c = RowCacheKey().Add("ab").Add("c").Digest();
  const uint64_t a_bc = RowCacheKey().Add("a").Add("bc").Digest();
  EXPECT_NE(ab_c, a_bc);
  EXPECT_EQ(ab_c, RowCacheKey().Add("ab").Add("c").Digest());
  EXPECT_NE(RowCacheKey().Add(int64_t{1}).Digest(),
            RowCacheKey().Add(int64_t{2}).Digest());
  EXPECT_EQ(RowCacheKeyHex(0xabc), "0000000000000abc");
}

TEST(RowCache, FieldsRoundTripWithNewlinesAndEquals) {
  const std::map<std::string, std::string> fields = {
      {"a", "plain"}, {"b", "two\nlines = x"}, {"c", ""}};
  EXPECT_EQ(DecodeRowCacheFields(EncodeRowCacheFields(fields)), fields);
  EXPECT_TRUE(DecodeRowCacheFields("no equals sign\n").empty());
}

}  // namespace
}  // namespace fedberry::runtime::row_cache_test
