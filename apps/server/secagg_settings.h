// --secure_aggregation and the --secagg_* flags: their checks, what they
// cannot combine with, and the coordinator's options they make.
// Thread-safety: pure functions.
#ifndef FEDBERRY_APPS_SERVER_SECAGG_SETTINGS_H_
#define FEDBERRY_APPS_SERVER_SECAGG_SETTINGS_H_

#include "absl/status/status.h"
#include "apps/server/server_config.h"
#include "server/round/coordinator_options.h"

namespace fedberry::apps {

// InvalidArgument naming the flag out of range, or the flag that does not
// combine with secure aggregation and why.
absl::Status CheckSecAgg(const ServerConfig& config);

// CheckSecAgg, then c.secagg when the flags turn it on.
absl::Status ApplySecAgg(const ServerConfig& config,
                         server::CoordinatorOptions& c);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SECAGG_SETTINGS_H_
