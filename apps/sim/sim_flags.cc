// The definitions of fedberry-sim's own flags (its table, sim_flags.inc) and
// SimPlanFromFlags, the one place they are read. The server's flags it
// passes through (--strategy, --dp_*, ...) are the server's own definitions
// (the shared rows of its flag table, apps/server/server_flags.inc),
// linked in.
#include "apps/sim/sim_flags.h"

#include <filesystem>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "apps/server/server_flags_shared.h"
#include "apps/sim/sim_flag_table.h"
#include "apps/sim/sim_flag_types.h"
#include "base/flag_table.h"
#include "base/status_macros.h"
#include "client/client_flag_types.h"  // PartitionKindText
#include "runtime/image_dataset.h"     // kDefaultFashionMnistDir

// Included by file name from this folder, so each flag's file, which --help
// prints, is the table's path in the source tree.
#define FEDBERRY_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_DEFINE_FLAG(Type, name, default_value, help);
#include "sim_flags.inc"
#undef FEDBERRY_FLAG

namespace fedberry::sim {

absl::StatusOr<SimPlan> SimPlanFromFlags() {
  SimPlan plan;
  FEDBERRY_RETURN_IF_ERROR(apps::ReadSharedServerFlags(plan.server));
  FEDBERRY_RETURN_IF_ERROR(base::ReadFlags(SimFlagTable(), plan));
  // A fleet profile sets the number of boards.
  if (!plan.fleet.profile_path.empty()) {
    auto loaded = LoadFleetProfile(plan.fleet.profile_path);
    if (!loaded.ok()) return loaded.status();
    plan.fleet.boards = *std::move(loaded);
  }
  if (plan.output.bin_dir.empty()) {
    plan.output.bin_dir =
        std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
  }
  FEDBERRY_RETURN_IF_ERROR(CheckSimPlan(plan));
  return plan;
}

}  // namespace fedberry::sim
