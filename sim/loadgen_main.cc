// fedberry-loadgen: N emulated boards against a running fedberry-server,
// for load tests of one gateway (bench/scale_bench.sh). Flags only; the
// boards are sim/emulated_fleet.
#include <cstdio>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "base/lock_checks.h"
#include "runtime/fd_limit.h"
#include "sim/emulated_fleet.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "The server (host:port).");
ABSL_FLAG(int, boards, 100, "Emulated boards, each on its own connection.");
ABSL_FLAG(std::string, name_prefix, "load",
          "Boards are named PREFIX-0, PREFIX-1, ...");
ABSL_FLAG(uint64_t, num_samples, 100,
          "Samples each board declares; its update's weight.");
ABSL_FLAG(absl::Duration, poll_deadline, absl::Seconds(15),
          "Deadline of a board's GetTask long poll.");
ABSL_FLAG(absl::Duration, give_up_after, absl::Minutes(2),
          "A board whose calls fail this long gives up.");
ABSL_FLAG(absl::Duration, progress, absl::Seconds(5),
          "Progress on stderr this often; 0: none.");

int main(int argc, char** argv) {
  fedberry::base::SkipMutexDeadlockChecks();
  fedberry::ParseCommandLine(
      argc, argv,
      "fedberry load generator: emulated boards that join a fedberry-server, "
      "poll, pull the model and push it back as their update (no training), "
      "round after round until the job is done.\nUsage: fedberry-loadgen "
      "--server=127.0.0.1:50051 --boards=1000",
      "loadgen_main");
  // Each board holds a connection, so a descriptor here too.
  if (auto raised = fedberry::runtime::RaiseFdLimit(); !raised.ok()) {
    std::fprintf(stderr, "fedberry-loadgen: %s\n",
                 std::string(raised.status().message()).c_str());
  }
  fedberry::sim::FleetOptions o;
  o.server = absl::GetFlag(FLAGS_server);
  o.boards = absl::GetFlag(FLAGS_boards);
  o.name_prefix = absl::GetFlag(FLAGS_name_prefix);
  o.num_samples = absl::GetFlag(FLAGS_num_samples);
  o.poll_deadline = absl::GetFlag(FLAGS_poll_deadline);
  o.give_up_after = absl::GetFlag(FLAGS_give_up_after);
  o.progress = absl::GetFlag(FLAGS_progress);
  auto report = fedberry::sim::RunEmulatedFleet(o);
  if (!report.ok()) {
    std::fprintf(stderr, "fedberry-loadgen: %s\n",
                 std::string(report.status().message()).c_str());
    return 2;
  }
  std::printf("fedberry-loadgen: %s\n", report->Describe().c_str());
  return report->heard_done == report->boards ? 0 : 1;
}
