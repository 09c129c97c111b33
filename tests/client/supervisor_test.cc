// The supervisor with a real child process (a shell script standing in for
// the client) and scripted memory readings on a simulated clock: restarts
// after a release only once memory is back for the hold time, passes any
// other exit status through, and gives up after max_restarts.
#include "client/supervisor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/testing/simulated_clock.h"
#include "tests/test_files.h"

namespace fedberry::client::supervisor_test {
namespace {

namespace fs = std::filesystem;

runtime::MemoryReadings At(double pct) {
  runtime::MemoryReadings r;
  r.mem_total_bytes = 1000ull << 20;
  r.mem_available_bytes = static_cast<uint64_t>((1000ull << 20) * pct / 100);
  return r;
}

// A child that exits 75 (released) the first `releases` times, then
// `final_code`. It counts its starts in `dir/starts`.
std::vector<std::string> Child(const std::string& dir, int releases,
                               int final_code) {
  const std::string script = dir + "/child.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "n=$(cat " << dir
                        << "/starts 2>/dev/null || echo 0)\n"
                        << "n=$((n+1)); echo $n > " << dir << "/starts\n"
                        << "[ $n -le " << releases << " ] && exit 75\n"
                        << "exit " << final_code << "\n";
  fs::permissions(script, fs::perms::owner_all);
  return {script};
}

int Starts(const std::string& dir) {
  std::ifstream in(dir + "/starts");
  int n = 0;
  in >> n;
  return n;
}

struct Fixture {
  SimulatedClock clock;
  std::vector<double> script;  // available % per poll; the last repeats
  size_t polls = 0;
  SupervisorOptions Options(std::vector<std::string> argv) {
    SupervisorOptions o;
    o.argv = std::move(argv);
    o.levels.resume_hold = absl::Seconds(10);
    o.read = [this] {
      const double pct = script[std::min(polls++, script.size() - 1)];
      return At(pct);
    };
    o.sleep = [this](absl::Duration d) { clock.Advance(d); };
    return o;
  }
};

TEST(Supervisor, RestartsAfterAReleaseOnceMemoryIsBack) {
  fedberry::testing::TempDir dir;
  Fixture f;
  // 20 polls under pressure, 5 calm, one dip, then calm for good.
  for (int i = 0; i < 20; ++i) f.script.push_back(10);
  for (int i = 0; i < 5; ++i) f.script.push_back(50);
  f.script.push_back(20);
  f.script.push_back(50);
  Supervisor s(f.Options(Child(dir.path(), 1, 0)), f.clock);
  EXPECT_EQ(s.Run(), 0);
  EXPECT_EQ(s.restarts(), 1);
  EXPECT_EQ(Starts(dir.path()), 2);
  // 26 polls before calm lasts, then 11 calm polls (10 s hold at 1 s).
  EXPECT_EQ(s.memory_polls(), 26 + 11);
}

TEST(Supervisor, RestartsAsOftenAsTheClientReleases) {
  fedberry::testing::TempDir dir;
  Fixture f;
  f.script = {50};
  Supervisor s(f.Options(Child(dir.path(), 3, 0)), f.clock);
  EXPECT_EQ(s.Run(), 0);
  EXPECT_EQ(s.restarts(), 3);
  EXPECT_EQ(Starts(dir.path()), 4);
}

TEST(Supervisor, OtherExitStatusesEndSupervision) {
  fedberry::testing::TempDir dir;
  Fixture f;
  f.script = {50};
  Supervisor s(f.Options(Child(dir.path(), 0, 3)), f.clock);
  EXPECT_EQ(s.Run(), 3);
  EXPECT_EQ(s.restarts(), 0);
  EXPECT_EQ(s.memory_polls(), 0);
}

TEST(Supervisor, GivesUpAfterMaxRestarts) {
  fedberry::testing::TempDir dir;
  Fixture f;
  f.script = {50};
  SupervisorOptions o = f.Options(Child(dir.path(), 100, 0));
  o.max_restarts = 2;
  Supervisor s(o, f.clock);
  EXPECT_EQ(s.Run(), 75);
  EXPECT_EQ(Starts(dir.path()), 3);
}

TEST(Supervisor, StopWhileWaitingForMemoryEnds) {
  fedberry::testing::TempDir dir;
  Fixture f;
  f.script = {10};
  SupervisorOptions o = f.Options(Child(dir.path(), 1, 0));
  Supervisor* self = nullptr;
  o.sleep = [&](absl::Duration d) {
    f.clock.Advance(d);
    if (f.polls == 100) self->Stop(SIGTERM);
  };
  Supervisor s(o, f.clock);
  self = &s;
  EXPECT_EQ(s.Run(), 130);
  EXPECT_EQ(Starts(dir.path()), 1);
}

TEST(Supervisor, MissingProgramFails) {
  Fixture f;
  f.script = {50};
  Supervisor s(f.Options({"/nonexistent/fedberry-client"}), f.clock);
  EXPECT_NE(s.Run(), 0);
}

}  // namespace
}  // namespace fedberry::client::supervisor_test
