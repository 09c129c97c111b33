// A ServerConfig into the server library's options: the strategy, the
// plan request, the coordinator's and the transport's settings, the
// differential privacy and the asynchronous rounds the command line asks
// for.
// Thread-safety: pure functions of their arguments.
#ifndef FEDBERRY_APPS_SERVER_SERVER_OPTIONS_H_
#define FEDBERRY_APPS_SERVER_SERVER_OPTIONS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "apps/server/server_config.h"
#include "server/federation_server.h"
#include "server/job_plan.h"
#include "server/privacy/dp_options.h"
#include "server/round/buffered_versions.h"
#include "server/round/coordinator_options.h"
#include "server/strategy/strategy.h"

namespace fedberry::apps {

// The strategy this server's coordinator applies: the job's, spilling
// under --output; fedavg at a gateway, whose parent applies the job's to
// the gateways' averages.
server::StrategyOptions StrategyOptionsOf(const ServerConfig& config);

server::planner::RoundPlanOptions PlanningOf(const PlannerConfig& planner);

// What BuildJobPlan needs. InvalidArgument naming --input_shape,
// --input_mean or --input_std when one does not parse.
absl::StatusOr<server::JobPlanRequest> PlanRequestOf(
    const ServerConfig& config);

// The coordinator's settings the command line gives; the plan's (model,
// encodings) are set from the job when it serves.
server::CoordinatorOptions CoordinatorOptionsOf(const ServerConfig& config);

// The transport's and the coordinator's settings.
server::ServerOptions ServerOptionsOf(const ServerConfig& config);

server::DpOptions DpOptionsOf(const ServerConfig& config);

// The asynchronous rounds --mode=async asks for; nullopt for sync.
// InvalidArgument as server::CheckAsyncOptions says, or for another mode.
absl::StatusOr<std::optional<server::AsyncOptions>> AsyncOptionsOf(
    const ServerConfig& config);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_OPTIONS_H_
