#include "client/client_flag_table.h"

#include <string>

#include "absl/time/time.h"
#include "client/client_args.h"        // the defaults of --server, ...
#include "client/client_flag_types.h"  // the tables' conversions
#include "client/eligibility_options.h"
#include "runtime/image_dataset.h"     // kDefaultFashionMnistDir
#include "runtime/periodic_sampler.h"  // kDefaultSampleInterval

namespace fedberry::client {

const base::FlagTable<ClientConfig>& ClientFlagTable() {
  static const auto* const table = new base::FlagTable<ClientConfig>{
#define FEDBERRY_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_FLAG_ROW(ClientConfig, Type, name, default_value, field, help),
#include "client_flags.inc"
#undef FEDBERRY_FLAG
  };
  return *table;
}

const base::FlagTable<runtime::WatchdogOptions>& WatchdogFlagTable() {
  static const auto* const table =
      new base::FlagTable<runtime::WatchdogOptions>{
#define FEDBERRY_FLAG(Type, name, default_value, field, help)            \
  FEDBERRY_FLAG_ROW(runtime::WatchdogOptions, Type, name, default_value, \
                    field, help),
#include "client_flags_watchdog.inc"
#undef FEDBERRY_FLAG
      };
  return *table;
}

}  // namespace fedberry::client
