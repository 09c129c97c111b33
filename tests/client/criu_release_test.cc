// The CRIU release around the supervisor, without CRIU (which cannot work on
// the build machine): the signals between client and supervisor with a
// forked stand-in for the other side; the release mode the client chooses;
// and the supervisor with a fake `criu` and a shell script standing in for
// the client: dump, wait for memory, restore and "go on"; a failed dump
// tells the client to exit (then a normal restart); a failed restore starts
// a fresh client.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/testing/simulated_clock.h"
#include "client/criu_adapter.h"
#include "client/criu_signals.h"
#include "client/release_mode.h"
#include "client/supervisor.h"
#include "tests/test_files.h"

namespace fedberry::client::criu_release_test {
namespace {

namespace fs = std::filesystem;

// As in fedberry-client's main: the signals are blocked before any thread
// starts (LibTorch's pools included), so they queue for sigtimedwait.
const bool kSignalsBlocked = (BlockCriuSignals(), true);

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

void WriteScript(const fs::path& path, const std::string& text) {
  std::ofstream(path) << "#!/bin/sh\n" << text;
  fs::permissions(path, fs::perms::owner_all);
}

// Forks a stand-in supervisor that waits for one dump request from this
// process and answers with `answer` (0: none). Returns its pid; it exits 0
// when the request came from its parent.
pid_t FakeSupervisor(int answer) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    siginfo_t info;
    timespec ten_seconds{10, 0};
    if (::sigtimedwait(&set, &info, &ten_seconds) != SIGUSR1) ::_exit(2);
    if (answer != 0) ::kill(::getppid(), answer);
    ::_exit(info.si_pid == ::getppid() ? 0 : 3);
  }
  return pid;
}

// Whether this process can be a child subreaper, as the supervisor must be
// for CRIU releases (qemu-user cannot).
bool CanBeSubreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

int ExitStatusOf(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(CriuSignals, RestoredAnswerLetsTheClientGoOn) {
  ASSERT_TRUE(kSignalsBlocked);
  const pid_t supervisor = FakeSupervisor(SIGUSR1);
  EXPECT_TRUE(RequestCriuDump(supervisor, absl::Seconds(10)).ok());
  EXPECT_EQ(ExitStatusOf(supervisor), 0);
}

TEST(CriuSignals, FailedDumpAnswerIsAFailedPrecondition) {
  const pid_t supervisor = FakeSupervisor(SIGUSR2);
  absl::Status s = RequestCriuDump(supervisor, absl::Seconds(10));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_EQ(ExitStatusOf(supervisor), 0);
}

TEST(CriuSignals, NoAnswerTimesOutAndAGoneSupervisorIsSaid) {
  const pid_t silent = FakeSupervisor(0);
  absl::Status s = RequestCriuDump(silent, absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_EQ(ExitStatusOf(silent), 0);
  // Reaped: the pid names no process now.
  s = RequestCriuDump(silent, absl::Seconds(1));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), std::to_string(silent))) << s;
}

TEST(CriuSignals, SupervisorPidComesFromTheEnvironment) {
  unsetenv(kCriuSupervisorEnv);
  EXPECT_FALSE(CriuSupervisorFromEnv().has_value());
  setenv(kCriuSupervisorEnv, "4242", 1);
  EXPECT_EQ(CriuSupervisorFromEnv(), 4242);
  setenv(kCriuSupervisorEnv, "x", 1);
  EXPECT_FALSE(CriuSupervisorFromEnv().has_value());
  unsetenv(kCriuSupervisorEnv);
}

TEST(ReleaseMode, CriuNeedsACheckpointAndACriuSupervisor) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      ChooseReleaseMode("dump", true, std::nullopt).status()));
  EXPECT_EQ(*ChooseReleaseMode("off", true, 7), ReleaseMode::kOff);
  EXPECT_EQ(*ChooseReleaseMode("exit", true, std::nullopt), ReleaseMode::kExit);
  // Nothing to come back to: pause only.
  EXPECT_EQ(*ChooseReleaseMode("exit", false, 7), ReleaseMode::kOff);
  EXPECT_EQ(*ChooseReleaseMode("criu", false, 7), ReleaseMode::kOff);
  // No supervisor that found CRIU usable: checkpoint and exit.
  EXPECT_EQ(*ChooseReleaseMode("criu", true, std::nullopt), ReleaseMode::kExit);
  EXPECT_EQ(*ChooseReleaseMode("criu", true, 7), ReleaseMode::kCriu);
}

// The supervisor with a fake criu. The stand-in client counts its starts;
// its first run asks for a dump and waits (SIGUSR2: exit 75, as the real
// client does), later runs exit 0. The fake criu's dump kills the process
// it dumps, as criu does; its restore starts a "restored" stand-in that
// waits for the supervisor's go-on signal and exits 0. Files in the folder
// make the dump or the restore fail.
class CriuSupervisor : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path d = dir_.path();
    WriteScript(d / "client.sh",
                absl::StrCat(R"(
n=$(cat )",
                             (d / "starts").string(), R"( 2>/dev/null || echo 0)
n=$((n+1)); echo $n > )",
                             (d / "starts").string(), R"(
[ $n -gt 1 ] && exit 0
[ -n "$FEDBERRY_CRIU_SUPERVISOR" ] || exit 3
trap 'echo told-to-exit >> )",
                             (d / "events").string(), R"(; exit 75' USR2
kill -USR1 "$FEDBERRY_CRIU_SUPERVISOR"
while :; do sleep 0.02; done
)"));
    WriteScript(d / "restored.sh",
                absl::StrCat(R"(
trap 'echo restored-went-on >> )",
                             (d / "events").string(), R"(; exit 0' USR1
touch )",
                             (d / "ready").string(), R"(
while :; do sleep 0.02; done
)"));
    WriteScript(d / "criu", absl::StrCat(R"(
echo "$@" >> )",
                                         (d / "calls").string(), R"(
cd )",
                                         d.string(), R"(
case "$1" in
  dump)
    [ -e dump-fails ] && { echo "Error (criu/cr-dump.c:1): fake" >&2; exit 1; }
    kill -9 "$3"; exit 0 ;;
  restore)
    [ -e restore-fails ] && { echo "Error (criu/cr-restore.c:1): fake" >&2; exit 1; }
    while [ "$1" != --pidfile ]; do shift; done
    sh restored.sh </dev/null >/dev/null 2>&1 &
    while [ ! -e ready ]; do sleep 0.01; done
    echo $! > "$2"; exit 0 ;;
esac
exit 0
)"));
  }

  struct Outcome {
    int code;
    int dumps, restores, restarts, memory_polls;
  };
  Outcome Run() {
    CriuAdapter criu({(dir_ / "criu"), dir_ / "images", false});
    SupervisorOptions o;
    o.argv = {dir_ / "client.sh"};
    o.levels.resume_hold = absl::Seconds(2);
    o.read = [] {
      runtime::MemoryReadings r;
      r.mem_total_bytes = 1000ull << 20;
      r.mem_available_bytes = 600ull << 20;
      return r;
    };
    o.sleep = [this](absl::Duration d) { clock_.Advance(d); };
    o.criu = &criu;
    Supervisor s(o, clock_);
    DumpRequestListener requests([&](pid_t from) { s.RequestDump(from); });
    Outcome out;
    out.code = s.Run();
    out.dumps = s.dumps();
    out.restores = s.restores();
    out.restarts = s.restarts();
    out.memory_polls = s.memory_polls();
    return out;
  }
  std::string Calls() { return ReadAll(dir_ / "calls"); }
  std::string Events() { return ReadAll(dir_ / "events"); }
  int Starts() { return std::stoi(ReadAll(dir_ / "starts")); }

  fedberry::testing::TempDir dir_;
  SimulatedClock clock_;
};

TEST_F(CriuSupervisor, DumpsWaitsForMemoryRestoresAndTellsItToGoOn) {
  if (!CanBeSubreaper()) {
    GTEST_SKIP() << "no child subreaper here: the supervisor turns CRIU off";
  }
  const Outcome out = Run();
  EXPECT_EQ(out.code, 0);
  EXPECT_EQ(out.dumps, 1);
  EXPECT_EQ(out.restores, 1);
  EXPECT_EQ(out.restarts, 0);
  EXPECT_EQ(out.memory_polls, 3);  // 2 s of calm at 1 s polls
  EXPECT_EQ(Starts(), 1);          // never started afresh
  EXPECT_TRUE(absl::StrContains(Calls(), "dump --tree ")) << Calls();
  EXPECT_TRUE(absl::StrContains(Calls(), "restore --images-dir")) << Calls();
  EXPECT_EQ(Events(), "restored-went-on\n");
}

TEST_F(CriuSupervisor, FailedDumpTellsTheClientToExitThenRestartsIt) {
  if (!CanBeSubreaper()) {
    GTEST_SKIP() << "no child subreaper here: the supervisor turns CRIU off";
  }
  std::ofstream(dir_ / "dump-fails");
  const Outcome out = Run();
  EXPECT_EQ(out.code, 0);
  EXPECT_EQ(out.dumps, 0);
  EXPECT_EQ(out.restores, 0);
  EXPECT_EQ(out.restarts, 1);
  EXPECT_EQ(Starts(), 2);  // the second start resumed from its checkpoint
  EXPECT_EQ(Events(), "told-to-exit\n");
  EXPECT_FALSE(absl::StrContains(Calls(), "restore")) << Calls();
}

TEST_F(CriuSupervisor, FailedRestoreStartsAFreshClient) {
  if (!CanBeSubreaper()) {
    GTEST_SKIP() << "no child subreaper here: the supervisor turns CRIU off";
  }
  std::ofstream(dir_ / "restore-fails");
  const Outcome out = Run();
  EXPECT_EQ(out.code, 0);
  EXPECT_EQ(out.dumps, 1);
  EXPECT_EQ(out.restores, 0);
  EXPECT_EQ(out.restarts, 1);
  EXPECT_EQ(Starts(), 2);
  EXPECT_EQ(Events(), "");
}

TEST_F(CriuSupervisor, WithoutCriuTheClientIsNotOfferedADump) {
  SupervisorOptions o;
  o.argv = {dir_ / "client.sh"};
  setenv(kCriuSupervisorEnv, "1234", 1);  // not passed on without CRIU
  Supervisor s(o);
  EXPECT_EQ(s.Run(), 3);
  unsetenv(kCriuSupervisorEnv);
}

}  // namespace
}  // namespace fedberry::client::criu_release_test
