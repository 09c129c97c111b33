#include "client/model_file_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/sha256.h"
#include "tests/test_files.h"

namespace fedberry::client::model_file_cache_test {
namespace {

namespace fs = std::filesystem;

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 131 + 7);
  return s;
}

TEST(ModelFileCache, APieceByPieceDownloadIsHashedAndKept) {
  fedberry::testing::TempDir dir;
  ModelFileCache cache(dir / "models");
  const std::string file = Bytes(3000);
  const std::string sha = runtime::Sha256Hex(file);
  EXPECT_FALSE(cache.Find(sha).has_value());
  ASSERT_TRUE(cache.Begin(sha, file.size()).ok());
  ASSERT_TRUE(cache.Append(0, file.substr(0, 1024)).ok());
  ASSERT_TRUE(cache.Append(1024, file.substr(1024)).ok());
  auto stored = cache.Commit();
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->sha256(), sha);
  EXPECT_EQ(stored->path(), cache.PathFor(sha));
  EXPECT_EQ(fs::file_size(stored->path()), file.size());
  auto found = cache.Find(sha);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path(), stored->path());
}

TEST(ModelFileCache, WrongBytesOrPiecesAreRefusedAndLeaveNothing) {
  fedberry::testing::TempDir dir;
  ModelFileCache cache(dir / "models");
  const std::string file = Bytes(2048);
  const std::string sha = runtime::Sha256Hex(file);

  // Other bytes than the plan's hash names.
  ASSERT_TRUE(cache.Begin(sha, file.size()).ok());
  ASSERT_TRUE(cache.Append(0, Bytes(2047) + "x").ok());
  auto bad = cache.Commit();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("hashes to"), std::string::npos);
  EXPECT_FALSE(fs::exists(cache.PathFor(sha)));
  EXPECT_FALSE(fs::exists(cache.PathFor(sha) + ".part"));

  // A piece out of order, one beyond the size, a file that ends early.
  ASSERT_TRUE(cache.Begin(sha, file.size()).ok());
  EXPECT_EQ(cache.Append(10, file).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(cache.Append(0, file + "x").code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(cache.Append(0, file.substr(0, 100)).ok());
  auto short_file = cache.Commit();
  EXPECT_EQ(short_file.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(short_file.status().message().find("after 100 of 2048"),
            std::string::npos);
  EXPECT_FALSE(cache.Find(sha).has_value());
}

TEST(ModelFileCache, ACorruptCachedFileIsDroppedToBeFetchedAgain) {
  fedberry::testing::TempDir dir;
  ModelFileCache cache(dir / "models");
  const std::string file = Bytes(512);
  const std::string sha = runtime::Sha256Hex(file);
  ASSERT_TRUE(cache.Begin(sha, file.size()).ok());
  ASSERT_TRUE(cache.Append(0, file).ok());
  ASSERT_TRUE(cache.Commit().ok());
  {
    std::fstream f(cache.PathFor(sha),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\xff');
  }
  EXPECT_FALSE(cache.Find(sha).has_value());
  EXPECT_FALSE(fs::exists(cache.PathFor(sha)));
}

}  // namespace
}  // namespace fedberry::client::model_file_cache_test
