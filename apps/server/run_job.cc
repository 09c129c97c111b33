// RunJob: the job's own rounds, on the plan the command line gives.
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <string>

#include "apps/server/run_server.h"
#include "apps/server/server_options.h"
#include "apps/server/serving.h"
#include "base/shutdown_signal.h"
#include "runtime/training_plan.h"
#include "server/job_plan.h"

namespace fedberry::apps {

int RunJob(const ServerConfig& config) {
  // The plan first: a model or data that does not fit fails here, before
  // any board joins.
  torch::manual_seed(config.plan.seed);
  auto plan_request = PlanRequestOf(config);
  if (!plan_request.ok()) {
    spdlog::error("{}", std::string(plan_request.status().message()));
    return 2;
  }
  auto job = server::BuildJobPlan(*plan_request);
  if (!job.ok()) {
    spdlog::error("{}", std::string(job.status().message()));
    return 2;
  }
  for (const auto& w : job->warnings) spdlog::warn("{}", w);
  spdlog::info("plan: {}", runtime::DescribePlan(job->plan));
  auto serving = StartServing(*std::move(job), config, ServerOptionsOf(config),
                              nullptr, config.plan.model);
  if (!serving.ok()) {
    spdlog::error("{}", std::string(serving.status().message()));
    return ExitCodeOf(serving.status());
  }
  server::FederationServer* server = (*serving)->server.get();
  ShutdownSignal signal(
      [server](int sig) {
        spdlog::warn("signal {} received: stopping the job", sig);
        server->Stop();
      },
      [revoked = (*serving)->revoked.get()] { ReloadRevoked(revoked); });
  server->Wait();
  return Finish(**serving, config, signal.received());
}

}  // namespace fedberry::apps
