#include "base/atomic_write.h"

#include <gtest/gtest.h>

#include <string>

#include "base/testing/fault_injection_file_system.h"
#include "tests/pki/pki_test_util.h"
#include "tests/test_files.h"

namespace fedberry::base::atomic_write_test {
namespace {

TEST(WriteFileAtomically, ReplacesTheFileWhole) {
  fedberry::testing::TempDir dir;
  FileSystem& fs = FileSystem::Default();
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "first").ok());
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "second").ok());
  EXPECT_EQ(fedberry::testing::ReadText(dir / "out"), "second");
  EXPECT_FALSE(fs.Exists(dir / "out.tmp"));
}

TEST(WriteFileAtomically, AFailureLeavesTheOldFileAndNoTemporary) {
  fedberry::testing::TempDir dir;
  testing::FaultInjectionFileSystem fs;
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "old").ok());
  for (testing::Op op :
       {testing::Op::kAppend, testing::Op::kSync, testing::Op::kRename}) {
    fs.FailNth(op, 1, absl::ResourceExhaustedError("No space left on device"));
    const absl::Status s = WriteFileAtomically(fs, dir / "out", "new");
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    EXPECT_NE(s.message().find(dir / "out"), std::string::npos) << s;
    EXPECT_EQ(fedberry::testing::ReadText(dir / "out"), "old");
    EXPECT_FALSE(fs.Exists(dir / "out.tmp"));
  }
}

// What returned OK survives a power cut: the file was fsynced before the
// rename, and the folder after it.
TEST(WriteFileAtomically, WhatItWroteSurvivesAPowerCut) {
  fedberry::testing::TempDir dir;
  testing::FaultInjectionFileSystem fs;
  ASSERT_TRUE(WriteFileAtomically(fs, dir / "out", "kept").ok());
  EXPECT_EQ(fs.calls(testing::Op::kSync), 1);
  EXPECT_EQ(fs.calls(testing::Op::kSyncDir), 1);
  fs.DropUnsyncedData();
  EXPECT_EQ(fedberry::testing::ReadText(dir / "out"), "kept");
}

}  // namespace
}  // namespace fedberry::base::atomic_write_test
