// The CRIU adapter: the command lines it builds and how it handles failure,
// with a fake `criu` executable first on PATH; the tmpfs refusal; and a real
// dump/restore that skips, saying why, where `criu check` fails.
#include "client/criu_adapter.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/test_files.h"

namespace fedberry::client::criu_adapter_test {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// A fake criu on PATH: records its arguments, prints what
// FAKE_CRIU_OUTPUT says and exits with FAKE_CRIU_EXIT; "restore" writes the
// pid file it was given.
class FakeCriu : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = fs::path(dir_ / "bin");
    fs::create_directories(bin_);
    const fs::path script = bin_ / "criu";
    std::ofstream(script) << R"(#!/bin/sh
echo "$@" >> ")" << (dir_ / "calls")
                          << R"("
if [ "$1" = restore ]; then
  while [ $# -gt 0 ]; do
    if [ "$1" = --pidfile ]; then echo 4242 > "$2"; fi
    shift
  done
fi
[ -n "$FAKE_CRIU_OUTPUT" ] && echo "$FAKE_CRIU_OUTPUT" >&2
exit ${FAKE_CRIU_EXIT:-0}
)";
    fs::permissions(script, fs::perms::owner_all);
    old_path_ = std::getenv("PATH");
    setenv("PATH", (bin_.string() + ":" + old_path_).c_str(), 1);
    unsetenv("FAKE_CRIU_EXIT");
    unsetenv("FAKE_CRIU_OUTPUT");
  }
  void TearDown() override { setenv("PATH", old_path_.c_str(), 1); }
  std::vector<std::string> Calls() {
    return absl::StrSplit(ReadAll(dir_ / "calls"), '\n', absl::SkipEmpty());
  }

  fedberry::testing::TempDir dir_;
  fs::path bin_;
  std::string old_path_;
};

TEST_F(FakeCriu, BuildsTheCommandLines) {
  CriuAdapter criu({"criu", "/var/lib/fedberry/criu", true});
  EXPECT_EQ(absl::StrJoin(criu.CheckCommand(), " "), "criu check");
  EXPECT_EQ(absl::StrJoin(criu.DumpCommand(123), " "),
            "criu dump --tree 123 --images-dir /var/lib/fedberry/criu "
            "--log-file dump.log --tcp-established --file-locks --shell-job");
  EXPECT_EQ(absl::StrJoin(criu.RestoreCommand(), " "),
            "criu restore --images-dir /var/lib/fedberry/criu --log-file "
            "restore.log --tcp-established --file-locks --restore-detached "
            "--pidfile /var/lib/fedberry/criu/restored.pid --shell-job");
  // A relative folder becomes absolute: criu reads a relative --pidfile
  // under the images folder, not under the caller's folder.
  CriuAdapter relative({"criu", "rel/criu", true});
  const std::string here = fs::current_path().string();
  EXPECT_NE(absl::StrJoin(relative.RestoreCommand(), " ")
                .find("--images-dir " + here + "/rel/criu "),
            std::string::npos);
  EXPECT_NE(absl::StrJoin(relative.RestoreCommand(), " ")
                .find("--pidfile " + here + "/rel/criu/restored.pid"),
            std::string::npos);
  CriuAdapter detached({"/usr/sbin/criu", "/d", false});
  EXPECT_EQ(detached.DumpCommand(7).back(), "--file-locks");
  EXPECT_EQ(detached.DumpCommand(7).front(), "/usr/sbin/criu");
}

TEST_F(FakeCriu, CheckPassesAndFailsWithTheReason) {
  CriuAdapter criu({"criu", dir_ / "images", true});
  EXPECT_TRUE(criu.Check().ok());
  setenv("FAKE_CRIU_EXIT", "1", 1);
  setenv("FAKE_CRIU_OUTPUT",
         "Warn: something\nError (criu/util.c:642): exited, status=1\n"
         "Error (criu/vdso.c:381): vdso: Unexpected rt vDSO area bounds\n"
         "Error (criu/crtools.c:260): Could not initialize kernel features",
         1);
  absl::Status s = criu.Check();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("Unexpected rt vDSO area bounds"),
            absl::string_view::npos)
      << s;
  EXPECT_EQ(Calls(), (std::vector<std::string>{"check", "check"}));
}

TEST_F(FakeCriu, MissingCriuIsAFailedPrecondition) {
  CriuAdapter criu({"criu-that-does-not-exist", "/tmp/x", true});
  absl::Status s = criu.Check();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("not installed"), absl::string_view::npos) << s;
}

TEST_F(FakeCriu, DumpAndRestoreRunCriuAndReadThePid) {
  const fs::path images = fs::path(dir_ / "images");
  CriuAdapter criu({"criu", images.string(), true});
  ASSERT_TRUE(criu.Dump(555).ok());
  EXPECT_TRUE(fs::is_directory(images));  // created on demand
  auto pid = criu.Restore();
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(*pid, 4242);
  std::vector<std::string> calls = Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(
      calls[0].rfind("dump --tree 555 --images-dir " + images.string(), 0), 0u)
      << calls[0];
  EXPECT_EQ(calls[1].rfind("restore --images-dir " + images.string(), 0), 0u)
      << calls[1];
}

TEST_F(FakeCriu, FailedDumpSaysWhyAndWhereTheLogIs) {
  const fs::path images = fs::path(dir_ / "images");
  CriuAdapter criu({"criu", images.string(), true});
  setenv("FAKE_CRIU_EXIT", "1", 1);
  setenv("FAKE_CRIU_OUTPUT", "Error (criu/cr-dump.c:1): Dumping FAILED.", 1);
  absl::Status s = criu.Dump(555);
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(s.message().find("Dumping FAILED"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find(images.string() + "/dump.log"),
            absl::string_view::npos)
      << s;
  EXPECT_TRUE(absl::IsInternal(criu.Restore().status()));
}

TEST_F(FakeCriu, RestoreWithoutAPidFileFails) {
  // A criu that "succeeds" but writes no pid file.
  std::ofstream(bin_ / "criu-nopid") << "#!/bin/sh\nexit 0\n";
  fs::permissions(bin_ / "criu-nopid", fs::perms::owner_all);
  CriuAdapter criu({"criu-nopid", dir_ / "images", true});
  EXPECT_TRUE(absl::IsInternal(criu.Restore().status()));
}

TEST_F(FakeCriu, RefusesATmpfsImagesFolder) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
  auto tmpfs = OnMemoryFileSystem("/dev/shm");
  ASSERT_TRUE(tmpfs.ok());
  if (!*tmpfs) GTEST_SKIP() << "/dev/shm is not tmpfs here";
  CriuAdapter criu({"criu", "/dev/shm/fedberry-criu-test/images", true});
  absl::Status s = criu.Dump(555);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("tmpfs"), absl::string_view::npos) << s;
  EXPECT_FALSE(fs::exists("/dev/shm/fedberry-criu-test"));
  EXPECT_TRUE(Calls().empty());  // criu never ran
  EXPECT_FALSE(*OnMemoryFileSystem(dir_.path()));
}

TEST_F(FakeCriu, NoImagesFolderIsRefused) {
  CriuAdapter criu({"criu", "", true});
  EXPECT_TRUE(absl::IsFailedPrecondition(criu.Dump(1)));
}

// A real dump and restore of a child process, where CRIU works.
TEST(RealCriu, DumpsAndRestoresAProcess) {
  fedberry::testing::TempDir dir;
  CriuAdapter criu({"criu", dir / "images", false});
  absl::Status check = criu.Check();
  if (!check.ok()) {
    GTEST_SKIP() << "CRIU cannot work on this machine: " << check.message();
  }
  auto in_memory = OnMemoryFileSystem(dir.path());
  if (in_memory.ok() && *in_memory) GTEST_SKIP() << "temp dir is on tmpfs";
  const fs::path counter = fs::path(dir / "counter");
  const pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    for (int i = 0;; ++i) {
      std::ofstream(counter) << i;
      ::usleep(10000);
    }
  }
  absl::SleepFor(absl::Milliseconds(200));
  absl::Status dumped = criu.Dump(child);
  int status = 0;
  ::waitpid(child, &status, 0);  // criu dump ends it
  ASSERT_TRUE(dumped.ok()) << dumped;
  const std::string at_dump = ReadAll(counter);
  auto restored = criu.Restore();
  ASSERT_TRUE(restored.ok()) << restored.status();
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_NE(ReadAll(counter), at_dump);  // it runs again, counting on
  ::kill(*restored, SIGKILL);
}

}  // namespace
}  // namespace fedberry::client::criu_adapter_test
