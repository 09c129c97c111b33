// fedberry-sim: a whole federation on this machine. Starts fedberry-server
// and N fedberry-emulated-client processes (fedberry-client with the test
// instruments --attack, --compute_slowdown, --data_fraction, --pause_every
// and --pause_seconds) on loopback, shows progress, and ends with a
// per-round table, each process's peak memory, a per-client resource table,
// and writes report.html into the output folder. The program is
// apps/sim/run_sim.h's; its flags are its table's (apps/sim/sim_flags.inc)
// and the server's it passes through, apps/server/server_flags_shared.cc's.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/server/server_flags_shared.h"
#include "apps/sim/run_sim.h"
#include "apps/sim/sim_flag_table.h"
#include "apps/sim/sim_flags.h"
#include "base/command_line.h"

int main(int argc, char** argv) {
  fedberry::ParseCommandLine(
      argc, argv, fedberry::sim::kSimUsage,
      std::vector<std::string>{fedberry::sim::kSimFlagsFile,
                               fedberry::apps::kServerSharedFlagsFile});
  auto plan = fedberry::sim::SimPlanFromFlags();
  if (!plan.ok()) {
    std::fprintf(stderr, "fedberry-sim: %s\n",
                 std::string(plan.status().message()).c_str());
    return 2;
  }
  return fedberry::sim::RunSim(*plan);
}
