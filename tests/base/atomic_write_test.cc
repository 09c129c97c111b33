// Atomic replacement: the old file or the new one survives a failure or a
// power cut, no temporary is left behind; with an exact mode, modes are exact
// whatever the umask (a key is never wider than 0600, not even as its
// temporary), and stale temporaries are replaced rather than reused.
#include "base/atomic_write.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "base/testing/fault_injection_file_system.h"
#include "tests/pki/pki_test_util.h"
#include "tests/test_files.h"

namespace fedberry::base::atomic_write_test {
namespace {

using ::fedberry::testing::ModeOf;
using ::fedberry::testing::ReadText;
using ::fedberry::testing::ScopedUmask;
using ::fedberry::testing::TempDir;
using ::fedberry::testing::WriteText;

TEST(WriteFileAtomically, ReplacesTheFileWhole) {
  TempDir dir;
  FileSystem& fs = FileSystem::Default();
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "first").ok());
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "second").ok());
  EXPECT_EQ(ReadText(dir / "out"), "second");
  EXPECT_FALSE(fs.Exists(dir / "out.tmp"));
}

TEST(WriteFileAtomically, AFailureLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  testing::FaultInjectionFileSystem fs;
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "old").ok());
  for (testing::Op op :
       {testing::Op::kAppend, testing::Op::kSync, testing::Op::kRename}) {
    fs.FailNth(op, 1, absl::ResourceExhaustedError("No space left on device"));
    const absl::Status s = WriteFileAtomically(fs, dir / "out", "new");
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    EXPECT_NE(s.message().find(dir / "out"), std::string::npos) << s;
    EXPECT_EQ(ReadText(dir / "out"), "old");
    EXPECT_FALSE(fs.Exists(dir / "out.tmp"));
  }
}

// What returned OK survives a power cut: the file was fsynced before the
// rename, and the folder after it.
TEST(WriteFileAtomically, WhatItWroteSurvivesAPowerCut) {
  TempDir dir;
  testing::FaultInjectionFileSystem fs;
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "kept").ok());
  EXPECT_EQ(fs.calls(testing::Op::kSync), 1);
  EXPECT_EQ(fs.calls(testing::Op::kSyncDir), 1);
  fs.DropUnsyncedData();
  EXPECT_EQ(ReadText(dir / "out"), "kept");
}

TEST(WriteFileAtomically, WritesExactModesWhateverTheUmask) {
  TempDir dir;
  FileSystem& fs = FileSystem::Default();
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}, mode_t{0777}}) {
    SCOPED_TRACE(mask);
    ScopedUmask umask(mask);
    EXPECT_OK(WriteFileAtomically(fs, dir / "key", "secret", ExactMode(0600)));
    EXPECT_EQ(ModeOf(dir / "key"), 0600);
    EXPECT_OK(WriteFileAtomically(fs, dir / "crt", "public", ExactMode(0644)));
    EXPECT_EQ(ModeOf(dir / "crt"), 0644);
  }
  EXPECT_EQ(ReadText(dir / "key"), "secret");
  EXPECT_EQ(ModeOf(dir / "key.tmp"), -1);
  EXPECT_EQ(ModeOf(dir / "crt.tmp"), -1);
}

// The fault-injection file system passes the mode on to the one it wraps.
TEST(WriteFileAtomically, AnExactModeGoesThroughFaultInjection) {
  TempDir dir;
  testing::FaultInjectionFileSystem fs;
  ScopedUmask umask(077);
  EXPECT_OK(WriteFileAtomically(fs, dir / "crt", "public", ExactMode(0644)));
  EXPECT_EQ(ModeOf(dir / "crt"), 0644);
}

TEST(WriteFileAtomically, ReplacesAndNarrowsAnExistingFile) {
  TempDir dir;
  WriteText(dir / "key", "old");
  ASSERT_EQ(::chmod((dir / "key").c_str(), 0666), 0);
  EXPECT_OK(WriteFileAtomically(FileSystem::Default(), dir / "key", "new",
                                ExactMode(0600)));
  EXPECT_EQ(ReadText(dir / "key"), "new");
  EXPECT_EQ(ModeOf(dir / "key"), 0600);
}

TEST(WriteFileAtomically, AStaleWideTemporaryIsNotReused) {
  TempDir dir;
  FileSystem& fs = FileSystem::Default();
  WriteText(dir / "key.tmp", "left by a crash, and much longer than the key");
  ASSERT_EQ(::chmod((dir / "key.tmp").c_str(), 0666), 0);
  // A symlink planted as the temporary is removed, not followed.
  WriteText(dir / "elsewhere", "untouched");
  ASSERT_EQ(::symlink((dir / "elsewhere").c_str(), (dir / "crt.tmp").c_str()),
            0);
  EXPECT_OK(WriteFileAtomically(fs, dir / "key", "k", ExactMode(0600)));
  EXPECT_OK(WriteFileAtomically(fs, dir / "crt", "c", ExactMode(0644)));
  EXPECT_EQ(ReadText(dir / "key"), "k");
  EXPECT_EQ(ModeOf(dir / "key"), 0600);
  EXPECT_EQ(ReadText(dir / "elsewhere"), "untouched");
  EXPECT_EQ(ModeOf(dir / "key.tmp"), -1);
}

TEST(WriteFileAtomically, ErrorsNameTheFile) {
  TempDir dir;
  FileSystem& fs = FileSystem::Default();
  absl::StatusOr<std::string> missing = fs.ReadFile(dir / "nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), absl::string_view::npos);
  absl::Status no_dir =
      WriteFileAtomically(fs, dir / "no/such/dir/f", "x", ExactMode(0644));
  EXPECT_EQ(no_dir.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(no_dir.message().find("no/such/dir"), absl::string_view::npos);
  EXPECT_OK(WriteFileAtomically(fs, dir / "empty", "", ExactMode(0644)));
  ASSERT_OK_AND_ASSIGN(std::string empty, fs.ReadFile(dir / "empty"));
  EXPECT_EQ(empty, "");
}

}  // namespace
}  // namespace fedberry::base::atomic_write_test
