// fedberry-sim's program: a whole federation on this machine, as a SimPlan
// says. Starts fedberry-server (and with tiers its site gateways) and the
// boards (fedberry-emulated-client) at once on loopback, shows progress,
// stops what a finished server leaves behind, and ends with a per-round
// table, each process's peak memory, a per-client resource table and
// <output>/report.html.
// Thread-safety: call once, from main's thread (it handles SIGINT and
// SIGTERM by stopping the federation).
#ifndef FEDBERRY_APPS_SIM_RUN_SIM_H_
#define FEDBERRY_APPS_SIM_RUN_SIM_H_

#include "apps/sim/sim_plan.h"

namespace fedberry::sim {

// Runs `plan` (checked by CheckSimPlan) and gives the process's exit
// status: 0 every round done and every process exited 0; 1 the job did
// not complete cleanly or a server exited before listening; 2 it could not
// start (output folder, certificates, ports, a process, a shaped link).
int RunSim(const SimPlan& plan);

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_RUN_SIM_H_
