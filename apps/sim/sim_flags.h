// fedberry-sim's flags (its table, sim_flags.inc, defined in sim_flags.cc)
// and the one place they are read: into a SimPlan.
// Thread-safety: call after the command line is parsed, from main's thread.
#ifndef FEDBERRY_APPS_SIM_SIM_FLAGS_H_
#define FEDBERRY_APPS_SIM_SIM_FLAGS_H_

#include "absl/status/statusor.h"
#include "apps/sim/sim_plan.h"

namespace fedberry::sim {

// Part of the table's path (sim_flags.inc), for ParseCommandLine's --help.
inline constexpr char kSimFlagsFile[] = "apps/sim/sim_flags";

// The parsed flags (InvalidArgument "--name: ..." for a value its row does
// not convert), with the fleet profile read (NotFound, InvalidArgument from
// LoadFleetProfile) and checked (CheckSimPlan's InvalidArgument).
absl::StatusOr<SimPlan> SimPlanFromFlags();

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_SIM_FLAGS_H_
