// The checks on fedberry-server's command line that need no model: each
// returns InvalidArgument naming the flags that are wrong or do not
// combine. They run when the server starts serving, after its plan.
// Thread-safety: pure functions of their arguments (ApplyMode also logs).
#ifndef FEDBERRY_APPS_SERVER_SERVER_CHECKS_H_
#define FEDBERRY_APPS_SERVER_SERVER_CHECKS_H_

#include "absl/status/status.h"
#include "apps/server/server_config.h"
#include "server/round/coordinator_options.h"

namespace fedberry::apps {

// --evaluate_on_boards and its companions.
absl::Status CheckBoardEvalOptions(const ServerConfig& config);

// The job's settings: board evaluation, the strategy and the planner for
// the smallest round that can close, the ranges of the rest.
absl::Status CheckServerOptions(const ServerConfig& config);

// The setting that voids differential privacy's guarantee or cannot be
// kept under it (the --dp_* values themselves need the model:
// server::CheckDpOptions).
absl::Status CheckDpCombination(const ServerConfig& config);

// --mode=async's settings and what they do not combine with.
absl::Status CheckMode(const ServerConfig& config);

// Asynchronous rounds in `c` when --mode=async asks for them (after
// CheckMode).
absl::Status ApplyMode(const ServerConfig& config,
                       server::CoordinatorOptions& c);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_CHECKS_H_
