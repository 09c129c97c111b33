// Atomic replacement: exact modes whatever the umask (a key is never wider
// than 0600, not even as its temporary), no temporary left behind, stale
// temporaries replaced rather than reused.
#include "pki/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/pki/pki_test_util.h"
#include "tests/test_files.h"

namespace fedberry::pki::atomic_file_test {
namespace {

using ::fedberry::testing::ModeOf;
using ::fedberry::testing::ReadText;
using ::fedberry::testing::ScopedUmask;
using ::fedberry::testing::TempDir;
using ::fedberry::testing::WriteText;

TEST(PkiAtomicFileTest, WritesExactModesWhateverTheUmask) {
  TempDir dir;
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}, mode_t{0777}}) {
    SCOPED_TRACE(mask);
    ScopedUmask umask(mask);
    EXPECT_OK(WriteFileAtomically(dir / "key", "secret", 0600));
    EXPECT_EQ(ModeOf(dir / "key"), 0600);
    EXPECT_OK(WriteFileAtomically(dir / "crt", "public", 0644));
    EXPECT_EQ(ModeOf(dir / "crt"), 0644);
  }
  EXPECT_EQ(ReadText(dir / "key"), "secret");
  EXPECT_EQ(ModeOf(dir / "key.tmp"), -1);
  EXPECT_EQ(ModeOf(dir / "crt.tmp"), -1);
}

TEST(PkiAtomicFileTest, ReplacesAndNarrowsAnExistingFile) {
  TempDir dir;
  WriteText(dir / "key", "old");
  ASSERT_EQ(::chmod((dir / "key").c_str(), 0666), 0);
  EXPECT_OK(WriteFileAtomically(dir / "key", "new", 0600));
  EXPECT_EQ(ReadText(dir / "key"), "new");
  EXPECT_EQ(ModeOf(dir / "key"), 0600);
}

TEST(PkiAtomicFileTest, AStaleWideTemporaryIsNotReused) {
  TempDir dir;
  WriteText(dir / "key.tmp", "left by a crash, and much longer than the key");
  ASSERT_EQ(::chmod((dir / "key.tmp").c_str(), 0666), 0);
  // A symlink planted as the temporary is removed, not followed.
  WriteText(dir / "elsewhere", "untouched");
  ASSERT_EQ(::symlink((dir / "elsewhere").c_str(), (dir / "crt.tmp").c_str()),
            0);
  EXPECT_OK(WriteFileAtomically(dir / "key", "k", 0600));
  EXPECT_OK(WriteFileAtomically(dir / "crt", "c", 0644));
  EXPECT_EQ(ReadText(dir / "key"), "k");
  EXPECT_EQ(ModeOf(dir / "key"), 0600);
  EXPECT_EQ(ReadText(dir / "elsewhere"), "untouched");
  EXPECT_EQ(ModeOf(dir / "key.tmp"), -1);
}

TEST(PkiAtomicFileTest, ErrorsNameTheFile) {
  TempDir dir;
  absl::StatusOr<std::string> missing = ReadWholeFile(dir / "nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), absl::string_view::npos);
  absl::Status no_dir = WriteFileAtomically(dir / "no/such/dir/f", "x", 0644);
  EXPECT_EQ(no_dir.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(no_dir.message().find("no/such/dir"), absl::string_view::npos);
  EXPECT_OK(WriteFileAtomically(dir / "empty", "", 0644));
  ASSERT_OK_AND_ASSIGN(std::string empty, ReadWholeFile(dir / "empty"));
  EXPECT_EQ(empty, "");
}

}  // namespace
}  // namespace fedberry::pki::atomic_file_test
