// fedberry-sim's own flag table (sim_flags.inc) as rows over SimPlan
// (base/flag_table.h). Each flag is named once, in its row; its definition
// (sim_flags.cc), its reading (SimPlanFromFlags), --help and
// docs/guide/flags.md (checked by tests/apps/flag_docs_test.cc) come from
// that row. The server's flags fedberry-sim passes through are the
// server's shared rows (apps/server/server_flag_table.h). No flags are
// defined here and no LibTorch is needed.
// Thread-safety: the table is made once, on first use, and never changes.
#ifndef FEDBERRY_APPS_SIM_SIM_FLAG_TABLE_H_
#define FEDBERRY_APPS_SIM_SIM_FLAG_TABLE_H_

#include "apps/sim/sim_plan.h"
#include "base/flag_table.h"

namespace fedberry::sim {

// fedberry-sim's usage message: the start of its --help.
inline constexpr char kSimUsage[] =
    "fedberry simulator: runs a server and N clients on loopback on "
    "Fashion-MNIST and prints a per-round table.\nUsage: fedberry-sim "
    "--clients=4 --rounds=5 --output=out\n"
    "       fedberry-sim --tiers=2 --gateways=2 --clients=4   (boards join "
    "site gateways, which join the server)";

// Every row of sim_flags.inc, in its order.
const base::FlagTable<SimPlan>& SimFlagTable();

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_SIM_FLAG_TABLE_H_
