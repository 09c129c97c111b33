// What RunJob and RunGateway share: a server serving a job's plan as its
// ServerConfig says, until the job ends, and what it writes then.
// Thread-safety: StartServing and Finish from one thread; the Serving
// they pass is that thread's.
#ifndef FEDBERRY_APPS_SERVER_SERVING_H_
#define FEDBERRY_APPS_SERVER_SERVING_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "apps/server/server_config.h"
#include "checkpoint/checkpoint_store.h"
#include "runtime/fd_limit.h"
#include "runtime/periodic_sampler.h"
#include "security/revocation_list.h"
#include "server/federation_server.h"
#include "server/job_plan.h"
#include "server/metrics_http_server.h"
#include "server/metrics_log.h"

namespace fedberry::apps {

// What a serving server holds until its job ends, in the order it must
// let go of it (members are destroyed last first).
struct Serving {
  std::unique_ptr<checkpoint::CheckpointStore> store;
  std::unique_ptr<server::MetricsLog> metrics;
  std::unique_ptr<security::RevocationList> revoked;
  std::unique_ptr<server::FederationServer> server;
  std::unique_ptr<runtime::FdUsageWatch> fd_watch;
  std::unique_ptr<runtime::PeriodicSampler> fd_sampler;
  std::unique_ptr<runtime::PeriodicSampler> revocation_watch;
  std::unique_ptr<server::MetricsHttpServer> metrics_http;
  v1::TrainingPlan plan;
  std::string script_source;  // TorchScript: the module the weights go in
  int rounds = 0;             // the job's; 0: a gateway's (its parent's)
};

// Exit codes: 2 for what the command line or the files get wrong, 3 when
// the server cannot start.
int ExitCodeOf(const absl::Status& s);

// Resumes from the checkpoints, checks `config` and wires the
// coordinator's options (`options`, from ServerOptionsOf(config) and what
// the caller adds), sinks and transport, and starts serving `job`. A
// gateway's coordinator (tiers) sends each round's result up to
// `upstream_sink`; null: this server runs the job's rounds itself.
// `script_source`: the TorchScript file the trained weights go in at the
// end. Unavailable or AlreadyExists when the server cannot start, else
// InvalidArgument or NotFound naming the flag or file.
absl::StatusOr<std::unique_ptr<Serving>> StartServing(
    server::JobPlan job, const ServerConfig& config,
    server::ServerOptions options, server::UpstreamSink upstream_sink,
    std::string script_source);

// SIGHUP re-reads the revocation list (null: none to re-read).
void ReloadRevoked(security::RevocationList* revoked);

// Stops serving and writes the final model (and the trained TorchScript
// module) to --output. Returns the exit code.
int Finish(Serving& serving, const ServerConfig& config, bool signalled);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVING_H_
