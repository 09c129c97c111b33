#include "client/client_flag_table.h"

#include <string>

#include "absl/time/time.h"
#include "client/client_args.h"        // the defaults of --server, ...
#include "client/client_flag_types.h"  // the table's conversions
#include "client/eligibility_options.h"
#include "runtime/image_dataset.h"     // kDefaultFashionMnistDir
#include "runtime/periodic_sampler.h"  // kDefaultSampleInterval

namespace fedberry::client {
namespace {

#define FEDBERRY_ROW(Type, name, default_value, field, help) \
  FEDBERRY_FLAG_ROW(ClientConfig, Type, name, default_value, field, help),
#define FEDBERRY_NO_ROW(Type, name, default_value, field, help)

base::FlagTable<ClientConfig> AllRows() {
#define FEDBERRY_FLAG FEDBERRY_ROW
#define FEDBERRY_WATCHDOG_FLAG FEDBERRY_ROW
  return {
#include "client_flags.inc"
  };
#undef FEDBERRY_FLAG
#undef FEDBERRY_WATCHDOG_FLAG
}

base::FlagTable<ClientConfig> AgentRows() {
#define FEDBERRY_FLAG FEDBERRY_ROW
#define FEDBERRY_WATCHDOG_FLAG FEDBERRY_NO_ROW
  return {
#include "client_flags.inc"
  };
#undef FEDBERRY_FLAG
#undef FEDBERRY_WATCHDOG_FLAG
}

base::FlagTable<ClientConfig> WatchdogRows() {
#define FEDBERRY_FLAG FEDBERRY_NO_ROW
#define FEDBERRY_WATCHDOG_FLAG FEDBERRY_ROW
  return {
#include "client_flags.inc"
  };
#undef FEDBERRY_FLAG
#undef FEDBERRY_WATCHDOG_FLAG
}

#undef FEDBERRY_ROW
#undef FEDBERRY_NO_ROW

}  // namespace

const base::FlagTable<ClientConfig>& ClientFlagTable() {
  static const auto* const table = new base::FlagTable<ClientConfig>(AllRows());
  return *table;
}

const base::FlagTable<ClientConfig>& AgentFlagTable() {
  static const auto* const table =
      new base::FlagTable<ClientConfig>(AgentRows());
  return *table;
}

const base::FlagTable<ClientConfig>& WatchdogFlagTable() {
  static const auto* const table =
      new base::FlagTable<ClientConfig>(WatchdogRows());
  return *table;
}

}  // namespace fedberry::client
