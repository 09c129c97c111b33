#include "server/federation_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "proto/wire.h"
#include "server/decode_failure_interceptor.h"

namespace fedberry::server {

absl::StatusOr<std::unique_ptr<FederationServer>> FederationServer::Start(
    ServerOptions options, runtime::NamedTensors initial, Evaluator evaluator,
    ReportSink sink, Clock& clock) {
  auto server = std::unique_ptr<FederationServer>(new FederationServer);
  server->options_ = options;
  server->clock_ = &clock;
  FEDBERRY_ASSIGN_OR_RETURN(
      server->coordinator_,
      RoundCoordinator::Create(options.coordinator, std::move(initial),
                               std::move(evaluator), std::move(sink), clock));
  if (options.restore) {
    if (absl::Status s = server->coordinator_->Restore(*options.restore);
        !s.ok()) {
      return s;
    }
  }
  server->coordinator_->SetSnapshotSink(options.snapshot_sink);
  // A model pull beyond max_streams, or a push beyond
  // max_inflight_updates, waits its turn: at most one per board the
  // registry holds.
  StreamLimiter::Options streams;
  streams.max_streams = options.max_streams;
  streams.max_waiting = options.coordinator.max_clients;
  streams.max_per_caller = options.max_streams_per_caller;
  streams.max_duration = options.max_stream_time;
  streams.max_stall = options.stream_stall_time;
  StreamLimiter::Options updates = streams;
  updates.max_streams = options.max_inflight_updates;
  updates.kind = "update pushes";
  updates.flag = "--max_inflight_updates";
  StreamLimiter::Options headers = streams;
  headers.max_streams = 0;  // a header costs little; its wait is bounded
  headers.kind = "update pushes awaiting their header";
  headers.flag = "--max_streams_per_caller";
  server->streams_ = std::make_unique<StreamLimiter>(streams, clock);
  server->updates_ = std::make_unique<StreamLimiter>(updates, clock);
  server->headers_ = std::make_unique<StreamLimiter>(headers, clock);
  server->service_ = std::make_unique<FederationService>(
      *server->coordinator_, options.max_poll,
      FederationService::StreamBounds{server->streams_.get(),
                                      server->updates_.get(),
                                      server->headers_.get()},
      std::move(options.plan), options.access, clock);
  // grpc.health.v1.Health, which load balancers and orchestrators probe:
  // SERVING for the server ("") and fedberry.v1.Federation while it runs.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  wire::ConfigureServerBuilder(builder);
  server->quota_ = std::make_unique<grpc::ResourceQuota>("fedberry-server");
  server->quota_->SetMaxThreads(options.max_threads);
  server->SizeTransportQuota();
  builder.SetResourceQuota(*server->quota_);
  builder.experimental().SetInterceptorCreators(DecodeFailureInterceptors());
  int port = 0;
  builder.AddListeningPort(options.listen,
                           options.credentials
                               ? options.credentials
                               : grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (address in use, or not an address of this machine?)"));
  }
  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  if (host == "0.0.0.0" || host == "[::]" || host.empty()) host = "127.0.0.1";
  server->address_ = absl::StrCat(host, ":", port);
  if (auto* health = server->server_->GetHealthCheckService()) {
    health->SetServingStatus(v1::Federation::service_full_name(), true);
  }
  server->driver_ = std::thread([s = server.get()] { s->Drive(); });
  return server;
}

FederationServer::~FederationServer() { Stop(); }

JobStatus FederationServer::Status() const {
  JobStatus status = StatusOf(*coordinator_);
  const std::pair<const char*, const StreamLimiter*> bounds[] = {
      {"streams", streams_.get()},
      {"updates", updates_.get()},
      {"headers", headers_.get()}};
  for (const auto& [name, limiter] : bounds) {
    status.stream_bounds.push_back(
        {name, limiter->active(), limiter->waiting(), limiter->cut_offs()});
  }
  return status;
}

void FederationServer::CancelOverdueStreams() {
  streams_->CancelOverdue();
  updates_->CancelOverdue();
  headers_->CancelOverdue();
}

void FederationServer::SizeTransportQuota() {
  if (options_.max_transport_bytes == 0) return;  // no bound
  const int boards = coordinator_->registered_clients();
  if (boards == quota_boards_) return;
  quota_boards_ = boards;
  quota_->Resize(options_.max_transport_bytes +
                 options_.transport_bytes_per_board *
                     static_cast<size_t>(std::max(0, boards)));
}

void FederationServer::Drive() {
  while (!coordinator_->done()) {
    coordinator_->RunOnce();
    SizeTransportQuota();
    CancelOverdueStreams();
    coordinator_->WaitForWork(absl::Milliseconds(100));
  }
  coordinator_->FinishPendingEvaluation();  // a job stopped mid-round
  // Keep answering while boards that have not heard DONE may still ask.
  const absl::Time give_up = clock_->Now() + options_.done_grace;
  while (clock_->Now() < give_up &&
         coordinator_->clients_awaiting_done(options_.done_silence) > 0) {
    CancelOverdueStreams();
    absl::MutexLock lock(&mu_);
    if (stopped_) break;
    // A poll (nothing signals a board hearing DONE): real time, while the
    // grace itself is on the clock.
    cv_.WaitWithTimeout(&mu_, absl::Milliseconds(50));
  }
  absl::MutexLock lock(&mu_);
  finished_ = true;
  cv_.SignalAll();
}

void FederationServer::Wait() {
  absl::MutexLock lock(&mu_);
  while (!finished_ && !stopped_) cv_.Wait(&mu_);
}

void FederationServer::Stop() {
  absl::MutexLock stopping(&stop_mu_);
  if (stop_done_) return;
  stop_done_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    cv_.SignalAll();
  }
  coordinator_->Shutdown();
  if (driver_.joinable()) driver_.join();
  // Probes hear NOT_SERVING while in-flight calls finish.
  if (auto* health = server_->GetHealthCheckService()) health->Shutdown();
  // In-flight calls get a moment to finish, then are cancelled.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
}

}  // namespace fedberry::server
