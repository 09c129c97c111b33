// One gateway under many boards, with real processes: fedberry-server
// against fedberry-loadgen's emulated boards (the real protocol, a
// connection each, no training). The bounds are counted, not timed: the
// server's peak RSS, its most threads, and what it says of its descriptor
// limit.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/process.h"
#include "tests/test_files.h"

namespace fedberry::scale_test {
namespace {

using sim::Process;
const std::string kBin = FEDBERRY_BIN_DIR;

int ThreadsOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return 0;
}

std::string ServerAddress(const std::string& out, Process& server) {
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(out + "/server.addr");
    std::string addr;
    if (in >> addr) return addr;
    if (server.Poll()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// fedberry-server under open-file limits `soft` and `hard`, logging to
// dir/name.log with its output in dir/name.
absl::StatusOr<Process> ServerUnder(const testing::TempDir& dir,
                                    const std::string& name, int soft, int hard,
                                    const std::string& flags) {
  return Process::Spawn(
      {"/bin/sh", "-c",
       "ulimit -S -n " + std::to_string(soft) + " && ulimit -H -n " +
           std::to_string(hard) + " && exec " + kBin + "/fedberry-server " +
           flags + " --output=" + (dir / name)},
      dir / (name + ".log"));
}

void Stop(Process& p) {
  p.Signal(SIGTERM);
  while (!p.Poll()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// With 8 updates and 32 model streams taken at once, 100 boards pulling and
// pushing a 4.8 MB model (wide-mlp) at the same moment cost the server at
// most that many models in flight, not 100, and no thread per waiting
// board. A server that held every push and pull peaked at 1.5 GiB with 100
// such boards, and held a thread per waiting board.
TEST(Scale, ManyBoardsPushingAFiveMegabyteModelStayWithinBounds) {
  testing::TempDir dir;
  const std::string out = dir / "out";
  auto server = Process::Spawn(
      {kBin + "/fedberry-server", "--listen=127.0.0.1:0", "--rounds=1",
       "--min_clients=100", "--min_clients_to_start=100", "--model=wide-mlp",
       "--eval_data=", "--max_inflight_updates=8", "--output=" + out},
      dir / "server.log");
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = ServerAddress(out, *server);
  ASSERT_FALSE(address.empty()) << ReadAll(dir / "server.log");
  auto fleet =
      Process::Spawn({kBin + "/fedberry-loadgen", "--server=" + address,
                      "--boards=100", "--progress=0", "--give_up_after=120s"},
                     dir / "loadgen.log");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  int max_threads = 0;
  std::optional<sim::ExitInfo> server_exit, fleet_exit;
  while (!server_exit || !fleet_exit) {
    if (!server_exit) {
      max_threads = std::max(max_threads, ThreadsOf(server->pid()));
      server_exit = server->Poll();
    }
    if (!fleet_exit) fleet_exit = fleet->Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string log = ReadAll(dir / "loadgen.log");
  ASSERT_EQ(fleet_exit->code, 0) << log << ReadAll(dir / "server.log");
  EXPECT_NE(log.find("100 heard DONE, 0 gave up"), std::string::npos) << log;
  ASSERT_EQ(server_exit->code, 0) << ReadAll(dir / "server.log");
  EXPECT_EQ(testing::CountLines(out + "/rounds.jsonl", "\"participants\":100"),
            1);
  // About 200 MiB are LibTorch's and gRPC's before the first board; the
  // rest is the 8 updates in flight (wire chunks and staging, about 2 x 4.8
  // MB each), the running sum, up to 32 model streams' buffers (about 2 MB
  // each) and gRPC's read buffers (its transport quota). 341-382 MiB in
  // five runs; 462-804 MiB while each add made a float64 copy of the
  // update and each push allocated its own staging tensors.
  const long peak_mib = server_exit->max_rss_kib / 1024;
  std::printf(
      "100 boards, wide-mlp, 8 updates in flight: server peak RSS "
      "%ld MiB, at most %d threads\n",
      peak_mib, max_threads);
  EXPECT_LT(peak_mib, 600);
  // Long polls and model and update streams hold no thread: a few dozen
  // for 100 boards (18 here; 51 when the streams held one each).
  EXPECT_LT(max_threads, 40);
}

// The descriptor wall: a server started under a low soft limit raises it
// to the hard one and says so; under a low hard limit it says, once, that
// boards are being refused for lack of descriptors.
TEST(Scale, TheOpenFileLimitIsRaisedOrItsWallIsSaid) {
  testing::TempDir dir;
  const std::string common =
      "--listen=127.0.0.1:0 --rounds=1 --min_clients=80 "
      "--min_clients_to_start=80 --eval_data= --round_deadline=20s";
  // A soft limit of 64 under a hard one of 4096: raised.
  auto raised = ServerUnder(dir, "raised", 64, 4096, common);
  ASSERT_TRUE(raised.ok());
  ASSERT_FALSE(ServerAddress(dir / "raised", *raised).empty())
      << ReadAll(dir / "raised.log");
  Stop(*raised);
  EXPECT_EQ(testing::CountLines(
                dir / "raised.log",
                "open-file limit raised from 64 to 4096 (the hard limit)"),
            1)
      << ReadAll(dir / "raised.log");

  // Both limits at 64: 80 boards cannot all connect, and the log says why.
  auto walled = ServerUnder(dir, "walled", 64, 64, common);
  ASSERT_TRUE(walled.ok());
  const std::string address = ServerAddress(dir / "walled", *walled);
  ASSERT_FALSE(address.empty()) << ReadAll(dir / "walled.log");
  auto fleet = Process::Spawn(
      {kBin + "/fedberry-loadgen", "--server=" + address, "--boards=80",
       "--progress=0", "--give_up_after=5s", "--poll_deadline=3s"},
      dir / "loadgen.log");
  ASSERT_TRUE(fleet.ok());
  // The boards that got in keep polling for a round that never opens: stop
  // once the server said it, or after a minute.
  for (int i = 0;
       i < 1200 && !fleet->Poll() &&
       testing::CountLines(dir / "walled.log", "out of file descriptors") == 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fleet->Signal(SIGKILL);
  while (!fleet->Poll()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Stop(*walled);
  const std::string log = ReadAll(dir / "walled.log");
  EXPECT_EQ(testing::CountLines(dir / "walled.log",
                                "open-file limit 64 (already the hard limit)"),
            1)
      << log;
  EXPECT_EQ(
      testing::CountLines(dir / "walled.log", "out of file descriptors: "), 1)
      << log;
  EXPECT_NE(log.find("new board connections are refused"), std::string::npos);
}

}  // namespace
}  // namespace fedberry::scale_test
