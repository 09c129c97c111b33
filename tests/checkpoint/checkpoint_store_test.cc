#include "checkpoint/checkpoint_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/testing/fault_injection_file_system.h"
#include "tests/test_files.h"

namespace fedberry::checkpoint::checkpoint_store_test {
namespace {

using base::testing::FaultInjectionFileSystem;
using base::testing::Op;
namespace fs = std::filesystem;

std::vector<CheckpointFile> Files(const std::string& tag) {
  return {{"model.pt", "model-" + tag + std::string(1000, 'm')},
          {"state.json", "{\"tag\":\"" + tag + "\"}"}};
}

std::string Tag(const LoadedCheckpoint& c) { return c.files.at("state.json"); }

int TmpDirs(const std::string& root) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    n += e.path().filename().string().find(".tmp") != std::string::npos;
  }
  return n;
}

TEST(CheckpointStore, SaveThenLoadLatestAndPointer) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt");
  auto a = store.Save(Files("a"));
  auto b = store.Save(Files("b"));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(*a, "ckpt-00000001");
  EXPECT_EQ(*b, "ckpt-00000002");
  auto latest = store.LoadLatest();
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->name, *b);
  EXPECT_EQ(Tag(*latest), "{\"tag\":\"b\"}");
  EXPECT_TRUE(latest->skipped.empty());
  std::ifstream pointer(dir / "ckpt/LATEST");
  std::string line;
  std::getline(pointer, line);
  EXPECT_EQ(line, *b);
}

TEST(CheckpointStore, KeepsTheNewestN) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt", base::FileSystem::Default(), {.keep = 2});
  for (const char* t : {"a", "b", "c", "d"})
    ASSERT_TRUE(store.Save(Files(t)).ok());
  auto list = store.List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "ckpt-00000004");
  EXPECT_TRUE((*list)[0].latest);
  EXPECT_EQ((*list)[1].name, "ckpt-00000003");
  EXPECT_TRUE((*list)[1].integrity.ok());
  EXPECT_EQ((*list)[0].files.size(), 2u);
}

TEST(CheckpointStore, EmptyFolderIsNotFound) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "none");
  EXPECT_EQ(store.LoadLatest().status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointStore, RefusesBadFileNames) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt");
  EXPECT_EQ(store.Save({{"../evil", "x"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Save({{"MANIFEST", "x"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Every call of every step of the write protocol, failed in turn: the save
// reports it, and the previous checkpoint stays the newest, intact.
TEST(CheckpointStore, FailureAtAnyStepKeepsThePreviousCheckpoint) {
  struct Case {
    Op op;
    absl::Status status;
    bool short_write;
  };
  const std::vector<Case> cases = {
      {Op::kCreate, absl::ResourceExhaustedError("ENOSPC"), false},
      {Op::kAppend, absl::ResourceExhaustedError("ENOSPC"), true},
      {Op::kAppend, absl::DataLossError("EIO"), false},
      {Op::kSync, absl::DataLossError("fsync EIO"), false},
      {Op::kClose, absl::InternalError("close"), false},
      {Op::kCreateDir, absl::PermissionDeniedError("read-only"), false},
      {Op::kRename, absl::InternalError("rename"), false},
      {Op::kSyncDir, absl::DataLossError("dir fsync"), false},
  };
  int injected = 0;
  for (const auto& c : cases) {
    // How many calls of this op one save makes.
    fedberry::testing::TempDir probe_dir;
    FaultInjectionFileSystem probe;
    CheckpointStore probe_store(probe_dir / "ckpt", probe);
    ASSERT_TRUE(probe_store.Save(Files("x")).ok());
    const int calls = probe.calls(c.op);
    ASSERT_GT(calls, 0);
    for (int n = 1; n <= calls; ++n) {
      fedberry::testing::TempDir dir;
      FaultInjectionFileSystem ffs;
      CheckpointStore store(dir / "ckpt", ffs);
      ASSERT_TRUE(store.Save(Files("old")).ok());
      ffs.FailNth(c.op, n, c.status, c.short_write);
      auto saved = store.Save(Files("new"));
      SCOPED_TRACE(::testing::Message()
                   << "op " << static_cast<int>(c.op) << " call " << n);
      ASSERT_FALSE(saved.ok());
      EXPECT_EQ(saved.status().code(), c.status.code());
      EXPECT_NE(saved.status().message().find("abandoned"), std::string::npos)
          << saved.status();
      ffs.DropUnsyncedData();  // and then the power went out
      auto latest = store.LoadLatest();
      ASSERT_TRUE(latest.ok()) << latest.status();
      EXPECT_EQ(Tag(*latest), "{\"tag\":\"old\"}");
      EXPECT_EQ(TmpDirs(dir / "ckpt"), 0);
      // The store keeps working after the failure.
      ASSERT_TRUE(store.Save(Files("later")).ok());
      EXPECT_EQ(Tag(*store.LoadLatest()), "{\"tag\":\"later\"}");
      ++injected;
    }
  }
  EXPECT_GT(injected, 10);
}

class CorruptionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorruptionTest, TruncatedOrFlippedFileFallsBackToPrevious) {
  const std::string victim = GetParam();
  for (bool truncate : {true, false}) {
    fedberry::testing::TempDir dir;
    CheckpointStore store(dir / "ckpt");
    ASSERT_TRUE(store.Save(Files("old")).ok());
    auto newest = store.Save(Files("new"));
    ASSERT_TRUE(newest.ok());
    const std::string path = dir / ("ckpt/" + *newest + "/" + victim);
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (truncate) {
      bytes.resize(bytes.size() / 2);
    } else {
      bytes[bytes.size() / 3] ^= 0x10;
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;

    auto direct = store.Load(*newest);
    ASSERT_FALSE(direct.ok());
    EXPECT_EQ(direct.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(direct.status().message().find(*newest), std::string::npos);

    auto latest = store.LoadLatest();
    ASSERT_TRUE(latest.ok()) << latest.status();
    EXPECT_EQ(Tag(*latest), "{\"tag\":\"old\"}");
    ASSERT_EQ(latest->skipped.size(), 1u);
    EXPECT_NE(latest->skipped[0].message().find(*newest), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(EachFile, CorruptionTest,
                         ::testing::Values("model.pt", "state.json",
                                           "MANIFEST"));

TEST(CheckpointStore, MissingFileIsDataLoss) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt");
  auto name = store.Save(Files("a"));
  ASSERT_TRUE(name.ok());
  fs::remove(dir / ("ckpt/" + *name + "/model.pt"));
  auto loaded = store.Load(*name);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("model.pt"), std::string::npos);
}

TEST(CheckpointStore, UnknownFormatVersionIsRefused) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt");
  ASSERT_TRUE(store.Save(Files("a")).ok());
  const std::string body =
      "{\"files\":[],\"format\":\"fedberry-checkpoint\",\"version\":99}\n";
  fs::create_directories(dir / "ckpt/ckpt-00000002");
  std::ofstream(dir / "ckpt/ckpt-00000002/MANIFEST")
      << body << "xxh3:" << Checksum(body) << "\n";
  auto v2 = store.Load("ckpt-00000002");
  EXPECT_EQ(v2.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(v2.status().message().find("version 99"), std::string::npos);
  // LoadLatest skips it for the valid older one.
  auto latest = store.LoadLatest();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->name, "ckpt-00000001");
}

// Checkpoints that are all bad are not "no checkpoint": a resuming server
// says so instead of starting afresh in silence.
TEST(CheckpointStore, OnlyBadCheckpointsAreDataLossNamingEach) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt");
  const std::string body =
      "{\"files\":[],\"format\":\"fedberry-checkpoint\",\"version\":99}\n";
  fs::create_directories(dir / "ckpt/ckpt-00000004");
  std::ofstream(dir / "ckpt/ckpt-00000004/MANIFEST")
      << body << "xxh3:" << Checksum(body) << "\n";
  auto latest = store.LoadLatest();
  EXPECT_EQ(latest.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(latest.status().message().find("ckpt-00000004"), std::string::npos)
      << latest.status();
}

TEST(CheckpointStore, LeftoverTempFolderFromACrashIsIgnoredAndCleaned) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "ckpt");
  ASSERT_TRUE(store.Save(Files("a")).ok());
  fs::create_directories(dir / "ckpt/ckpt-00000002.tmp");
  std::ofstream(dir / "ckpt/ckpt-00000002.tmp/model.pt") << "half";
  EXPECT_EQ(store.LoadLatest()->name, "ckpt-00000001");
  auto next = store.Save(Files("b"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, "ckpt-00000003");
  EXPECT_EQ(TmpDirs(dir / "ckpt"), 0);
}

}  // namespace
}  // namespace fedberry::checkpoint::checkpoint_store_test
