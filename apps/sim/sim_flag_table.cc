#include "apps/sim/sim_flag_table.h"

#include <string>

#include "absl/time/time.h"
#include "apps/sim/sim_flag_types.h"
#include "client/client_flag_types.h"  // PartitionKindText
#include "runtime/image_dataset.h"     // kDefaultFashionMnistDir

namespace fedberry::sim {
namespace {

base::FlagTable<SimPlan> AllRows() {
#define FEDBERRY_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_FLAG_ROW(SimPlan, Type, name, default_value, field, help),
  return {
#include "sim_flags.inc"
  };
#undef FEDBERRY_FLAG
}

}  // namespace

const base::FlagTable<SimPlan>& SimFlagTable() {
  static const auto* const table = new base::FlagTable<SimPlan>(AllRows());
  return *table;
}

}  // namespace fedberry::sim
