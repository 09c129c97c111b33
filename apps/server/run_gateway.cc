// RunGateway: a site gateway (tiers) joins its parent as one board that
// speaks for its own boards, and serves each of the parent's tasks on the
// parent's plan with them.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "apps/server/run_server.h"
#include "apps/server/server_options.h"
#include "apps/server/serving.h"
#include "base/clock.h"
#include "base/shutdown_signal.h"
#include "base/status_macros.h"
#include "client/client_agent.h"
#include "client/round_meter.h"
#include "proto/wire.h"
#include "runtime/device_facts.h"
#include "runtime/proc_files.h"
#include "runtime/training_plan.h"
#include "security/transport.h"
#include "server/job_plan.h"
#include "tiers/clipped_sum.h"
#include "tiers/gateway_trainer.h"

namespace fedberry::apps {
namespace {

// How a site gateway joins its parent: as one board named by
// --upstream_name, else its certificate, else its host.
client::AgentOptions GatewayAgentOptions(
    const security::ClientTransport& transport, const ServerConfig& config) {
  client::AgentOptions options;
  options.device = client::ToDeviceInfo(
      runtime::ReadDeviceFacts(runtime::ProcFiles::Real()));
  options.name = config.gateway.name;
  if (options.name.empty()) {
    options.name = !transport.certificate_name.empty()
                       ? transport.certificate_name
                       : absl::StrCat("gateway-", options.device.hostname());
  }
  options.model_cache_dir = config.output.dir + "/cache";
  options.probe_transport = transport.probe;
  options.seed = config.plan.seed;
  return options;
}

// What a gateway holds while it serves its parent's job. The site is set
// on the agent's thread, once, the first time the parent hands a task.
struct Site {
  std::unique_ptr<Serving> serving;
  std::atomic<security::RevocationList*> revoked{nullptr};  // for SIGHUP
  // The root's differential privacy, task by task (none: as before).
  std::shared_ptr<tiers::SitePrivacy> privacy =
      std::make_shared<tiers::SitePrivacy>();
};

// Starts serving the parent's plan (its model file, when it sends one)
// with the boards' results sent up to `sink`.
tiers::GatewayTrainer::SiteStarter ServeParentPlan(const ServerConfig& config,
                                                   Site& site) {
  return [&config, &site](const v1::TrainingPlan& plan,
                          const runtime::VerifiedModelFile* file,
                          server::UpstreamSink sink)
             -> absl::StatusOr<server::RoundCoordinator*> {
    FEDBERRY_ASSIGN_OR_RETURN(server::JobPlan job,
                              server::JobPlanFromParent(plan, file));
    for (const auto& w : job.warnings) spdlog::warn("{}", w);
    spdlog::info("the parent's plan: {}", runtime::DescribePlan(plan));
    server::ServerOptions options = ServerOptionsOf(config);
    tiers::ForwardClippedSums(site.privacy, options.coordinator);
    FEDBERRY_ASSIGN_OR_RETURN(
        site.serving,
        StartServing(std::move(job), config, std::move(options),
                     std::move(sink), file != nullptr ? file->path() : ""));
    site.revoked = site.serving->revoked.get();
    return &site.serving->server->coordinator();
  };
}

}  // namespace

int RunGateway(const ServerConfig& config) {
  if (!config.plan.trainable.empty()) {
    spdlog::error(
        "--trainable is the job's setting: give it to the top server; a "
        "gateway (--upstream) trains what its parent's plan says");
    return 2;
  }
  auto transport = security::MakeClientTransport(
      config.gateway.link, wire::ClientChannelArguments(), Clock::Real().Now());
  if (!transport.ok()) {
    spdlog::error("--upstream: {}", std::string(transport.status().message()));
    return 2;
  }
  Site site;
  tiers::GatewayOptions gateway;
  gateway.min_boards = std::max(1, config.rounds.min_clients_to_start);
  tiers::GatewayTrainer trainer(gateway, ServeParentPlan(config, site),
                                site.privacy);
  const client::AgentOptions agent_options =
      GatewayAgentOptions(*transport, config);
  client::ClientAgent agent(agent_options, trainer,
                            v1::Federation::NewStub(transport->channel));
  spdlog::info("site gateway '{}': joining {} ({})", agent_options.name,
               config.gateway.link.server, transport->description);
  ShutdownSignal signal(
      [&](int sig) {
        spdlog::warn("signal {} received: stopping the gateway", sig);
        agent.Stop();
        trainer.Stop();
      },
      [&site] { ReloadRevoked(site.revoked.load()); });
  const absl::Status done = agent.Run();
  if (!site.serving) {
    spdlog::error("the gateway never served: {}", done.ToString());
    return signal.received() ? 130 : 1;
  }
  if (done.ok()) {
    spdlog::info(
        "the parent says the job is done; telling this gateway's "
        "boards");
    trainer.JobDone();
    site.serving->server->Wait();
  } else if (!signal.received()) {
    spdlog::error("the link to the parent ended: {}", done.ToString());
  }
  const int code = Finish(*site.serving, config, signal.received());
  return done.ok() || signal.received() ? code : 1;
}

}  // namespace fedberry::apps
