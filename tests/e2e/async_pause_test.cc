// End to end: asynchronous rounds (--mode=async) while the memory watchdog
// pauses one board. That board's watchdog reads meminfo and PSI from files
// this test writes (fedberry-emulated-client --memory_readings_dir), so the
// test pauses it mid-job and lets it go again whatever else this machine
// runs; the other boards run no watchdog. They keep publishing versions
// while it is paused, until its task is more than --max_staleness versions
// behind and the server expires it as a round opens
// (BufferedVersions::Open). The update the board pushes once it resumes is
// then refused as STALE_UPDATE; it asks again at once, is handed a task on
// the latest version, and that update counts. No times are asserted.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sim/process.h"
#include "tests/json_lines.h"
#include "tests/test_files.h"

namespace fedberry::async_pause_test {
namespace {

using sim::Process;
using testing::ReadJsonLines;

const std::string kBin = FEDBERRY_BIN_DIR;
constexpr int kVersions = 24;
constexpr int kMaxStaleness = 3;

void SleepMs(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// The readings the paused board's watchdog takes: 1 GiB of memory with
// `available_mib` available, no PSI stall. Replaced whole, so the watchdog
// never reads half a file.
void WriteMemory(const std::string& dir, int available_mib) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/meminfo.tmp")
      << "MemTotal: 1048576 kB\nMemAvailable: " << available_mib * 1024
      << " kB\n";
  std::ofstream(dir + "/pressure.tmp")
      << "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
         "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
  std::filesystem::rename(dir + "/meminfo.tmp", dir + "/meminfo");
  std::filesystem::rename(dir + "/pressure.tmp", dir + "/pressure");
}

// Pauses below 100 MiB available, resumes at 400 MiB; no shrinking and no
// release: the board only pauses.
const std::vector<std::string> kWatchdogFlags = {
    "--watchdog_poll_interval=100ms",    "--watchdog_soft_available=100MiB",
    "--watchdog_pause_available=100MiB", "--watchdog_resume_available=400MiB",
    "--watchdog_critical_available=off", "--watchdog_soft_psi=100",
    "--watchdog_pause_psi=100",          "--watchdog_resume_psi=100",
    "--watchdog_critical_psi=0",         "--watchdog_pause_hold=0",
    "--watchdog_resume_hold=0",          "--watchdog_report_every=1s",
    "--watchdog_micro_batches=1",        "--watchdog_release=off"};

class AsyncPause : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteTinyDataset(dir_ / "data", 1200);
    WriteMemory(memory_, 800);
  }
  void TearDown() override {
    // A failed assertion leaves no process behind.
    for (Process& p : procs_) {
      p.Signal(SIGKILL);
      WaitExit(p);
    }
  }

  Process& Spawn(const std::vector<std::string>& argv, const std::string& log) {
    auto p = Process::Spawn(argv, log);
    EXPECT_TRUE(p.ok()) << p.status();
    procs_.push_back(*p);
    return procs_.back();
  }
  static sim::ExitInfo WaitExit(Process& p) {
    while (!p.Poll()) SleepMs(10);
    return *p.exit();
  }
  // Waits until `log` has a line with `needle`; false when `p` ended first.
  static bool WaitForLine(Process& p, const std::string& log,
                          const std::string& needle) {
    while (testing::CountLines(log, needle) == 0) {
      if (p.Poll()) return testing::CountLines(log, needle) > 0;
      SleepMs(20);
    }
    return true;
  }
  // Versions published so far: whole lines of rounds.jsonl (the server
  // may be writing the next).
  size_t Versions() const {
    std::ifstream in(out_ + "/rounds.jsonl");
    const std::string text((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  // Waits until the job published `n` versions; false when the server
  // ended first.
  bool WaitForVersions(size_t n) {
    while (Versions() < n && !procs_[0].Poll()) SleepMs(50);
    return Versions() >= n;
  }

  // The server and three boards; board-0 runs the watchdog.
  void Start();
  // The server's log has a refusal of board-0's update as stale.
  bool ServerRefusedAsStale() const;
  // board-0's first push after it resumed was refused as stale before it
  // pulled its next task.
  bool RefusedBeforeItsNextTask() const;

  testing::TempDir dir_;
  const std::string out_ = dir_ / "out";
  const std::string memory_ = dir_ / "memory";
  const std::string log_ = dir_ / "board-0.log";  // the paused board's
  std::vector<Process> procs_;  // the server first; reserved: no moves
};

void AsyncPause::Start() {
  procs_.reserve(4);
  Process& server =
      Spawn({kBin + "/fedberry-server", "--listen=127.0.0.1:0",
             "--output=" + out_, "--mode=async", "--async_buffer=1",
             "--max_staleness=" + std::to_string(kMaxStaleness),
             "--rounds=" + std::to_string(kVersions), "--min_clients=3",
             "--min_clients_to_start=3", "--local_steps=60", "--batch_size=16",
             "--model=lenet5", "--eval_data=", "--seed=3", "--threads=1"},
            dir_ / "server.log");
  std::string address;
  while (address.empty() && !server.Poll()) {
    std::ifstream(out_ + "/server.addr") >> address;
    SleepMs(10);
  }
  ASSERT_FALSE(address.empty()) << "the server did not start";
  for (int i = 0; i < 3; ++i) {
    const std::string name = "board-" + std::to_string(i);
    std::vector<std::string> argv = {kBin + "/fedberry-emulated-client",
                                     "--server=" + address,
                                     "--data=" + (dir_ / "data"),
                                     "--partition_index=" + std::to_string(i),
                                     "--partition_count=3",
                                     "--threads=1",
                                     "--name=" + name,
                                     "--max_backoff=300ms",
                                     "--give_up_after=60s"};
    if (i == 0) {
      argv.push_back("--memory_readings_dir=" + memory_);
      argv.insert(argv.end(), kWatchdogFlags.begin(), kWatchdogFlags.end());
    } else {
      argv.push_back("--watchdog=false");
    }
    Spawn(argv, dir_ / (name + ".log"));
  }
}

bool AsyncPause::ServerRefusedAsStale() const {
  std::ifstream joined(log_);
  std::string id((std::istreambuf_iterator<char>(joined)),
                 std::istreambuf_iterator<char>());
  const std::string kJoined = "joined job 'job' as ";
  const size_t as = id.find(kJoined);
  if (as == std::string::npos) return false;
  id = id.substr(as + kJoined.size(),
                 id.find(' ', as + kJoined.size()) - as - kJoined.size());
  std::ifstream in(dir_ / "server.log");
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("refused update from " + id) != std::string::npos &&
        line.find("stale update") != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool AsyncPause::RefusedBeforeItsNextTask() const {
  std::ifstream in(log_);
  std::string line;
  while (std::getline(in, line) &&
         line.find("resuming training") == std::string::npos) {
  }
  while (std::getline(in, line)) {
    if (line.find("pulling the global model") != std::string::npos) break;
    // The push's refusal, not a heartbeat's ("heartbeat not delivered").
    if (line.find("stale update: trained on the model of round") !=
            std::string::npos &&
        line.find("waiting for the next round") != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST_F(AsyncPause, AStaleUpdateAfterAPauseIsRefusedAndTheBoardsNextCounts) {
  ASSERT_NO_FATAL_FAILURE(Start());
  Process& paused = procs_[1];
  // Mid-job: a version is out before the pressure comes.
  ASSERT_TRUE(WaitForVersions(1));
  WriteMemory(memory_, 50);
  ASSERT_TRUE(WaitForLine(paused, log_, "paused at a batch boundary"));
  // Its task is on a round no later than the one open now (version
  // `at_pause` + 1): once max_staleness + 2 more versions are out, a round
  // past its bound has opened and expired it.
  const size_t at_pause = Versions();
  const size_t expired = at_pause + kMaxStaleness + 2;
  ASSERT_LE(expired + 8, static_cast<size_t>(kVersions))
      << "the job was nearly over when board-0 paused";
  ASSERT_TRUE(WaitForVersions(expired));
  EXPECT_EQ(testing::CountLines(log_, "resuming training"), 0);
  WriteMemory(memory_, 800);
  ASSERT_TRUE(WaitForLine(paused, log_, "resuming training"));
  for (Process& p : procs_) EXPECT_EQ(WaitExit(p).code, 0);

  // Every version was published, each of one update.
  const auto rounds = ReadJsonLines(out_ + "/rounds.jsonl");
  ASSERT_EQ(rounds.size(), static_cast<size_t>(kVersions));
  for (const auto& r : rounds) EXPECT_EQ(r.at("updates").get<int>(), 1) << r;
  // The versions published while board-0 was paused came from the others;
  // after it resumed, its update on a fresh task counted.
  int after_resume = 0;
  for (const auto& c : ReadJsonLines(out_ + "/clients.jsonl")) {
    if (!c.contains("num_samples")) continue;
    const size_t version = c.at("round").get<size_t>();
    const bool board0 = c.at("client").get<std::string>() == "board-0";
    if (version > at_pause && version <= expired) {
      EXPECT_FALSE(board0) << "version " << version << " while paused: " << c;
    }
    after_resume += board0 && version > expired;
  }
  EXPECT_GE(after_resume, 1);
  // The server refused its stale push (not counted through rounds.jsonl's
  // `rejected`: a refusal while a version is being published lands in no
  // round's count), and the board heard it before it pulled a fresh task.
  EXPECT_TRUE(ServerRefusedAsStale());
  EXPECT_TRUE(RefusedBeforeItsNextTask());
}

}  // namespace
}  // namespace fedberry::async_pause_test
