// The definitions of fedberry-client's flags (its table, client_flags.inc)
// and ClientConfigFromFlags, the one place they are read.
#include "client/client_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "base/flag_table.h"
#include "base/status_macros.h"
#include "client/client_args.h"
#include "client/client_flag_table.h"
#include "client/client_flag_types.h"
#include "client/eligibility_options.h"
#include "runtime/image_dataset.h"
#include "runtime/periodic_sampler.h"
#include "runtime/sha256.h"
#include "runtime/watchdog.h"

// Included by file name from this folder, so each flag's file, which --help
// prints, is the table's path in the source tree.
#define FEDBERRY_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_DEFINE_FLAG(Type, name, default_value, help);
#define FEDBERRY_WATCHDOG_FLAG FEDBERRY_FLAG
#include "client_flags.inc"
#undef FEDBERRY_FLAG
#undef FEDBERRY_WATCHDOG_FLAG

namespace fedberry::client {

absl::StatusOr<ClientConfig> ClientConfigFromFlags() {
  ClientConfig config;
  FEDBERRY_RETURN_IF_ERROR(base::ReadFlags(AgentFlagTable(), config));
  // The folders --checkpoint_dir implies when not given.
  if (config.data.cache_dir.empty()) {
    config.data.cache_dir = DefaultCacheDir(config.checkpoint_dir);
  }
  if (config.criu_dir.empty()) {
    config.criu_dir = DefaultCriuDir(config.checkpoint_dir);
  }
  if (!config.model_sha256.empty() &&
      !runtime::IsSha256Hex(config.model_sha256)) {
    return absl::InvalidArgumentError(
        "--model_sha256 must be 64 lowercase hex digits");
  }
  // The levels are read only when the watchdog or the supervisor runs, so a
  // level of a watchdog that is off is not refused.
  if (config.watchdog || config.supervise) {
    FEDBERRY_RETURN_IF_ERROR(base::ReadFlags(WatchdogFlagTable(), config));
    FEDBERRY_RETURN_IF_ERROR(
        runtime::ValidateWatchdogOptions(config.watchdog_options));
  }
  FEDBERRY_RETURN_IF_ERROR(ValidateEligibilityOptions(config.eligibility));
  return config;
}

}  // namespace fedberry::client
