// A running aggregation server: the round coordinator, its gRPC service on a
// listening port, and the driver thread that opens and closes rounds.
// Used by fedberry-server and by in-process integration tests.
// Thread-safe.
#ifndef FEDBERRY_SERVER_FEDERATION_SERVER_H_
#define FEDBERRY_SERVER_FEDERATION_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "server/round_coordinator.h"
#include "server/server_metrics.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

struct ServerOptions {
  std::string listen = "0.0.0.0:50051";  // port 0 picks a free port
  CoordinatorOptions coordinator;
  absl::Duration max_poll = absl::Seconds(5);
  // gRPC's resource quota for threads of synchronous calls. Every method of
  // the service is a callback, so it bounds nothing today (kept for
  // --max_threads on older command lines).
  int max_threads = 2048;
  // Memory gRPC's transport may take for all connections (its resource
  // quota): under pressure it shrinks read buffers and windows instead of
  // holding about 2 MB per board of a 4.8 MB model (1,000 such boards
  // peaked at 2.2 GiB without it, 0.9 GiB with 256 MiB, and rounds were
  // faster). Zero: no bound.
  size_t max_transport_bytes = size_t{256} << 20;
  // And this much more per registered board, the quota growing as boards
  // join: a connection and its parked poll cost the transport tens of KB
  // even when idle, and a quota they fill makes gRPC cancel calls in
  // flight ("Buffers full"), which boards retry. A fixed 256 MiB at 10,000
  // boards of a 4.8 MB model held rounds to about one update a second.
  size_t transport_bytes_per_board = size_t{256} << 10;
  // Model and sample streams at once, and how long one may last before it
  // is cancelled (a stalled client lets go of its buffers); see
  // StreamLimiter. A model pull beyond it waits its turn (no thread, no
  // copy of the model); a sample stream is refused and retried. Zero: no
  // limit.
  int max_streams = 32;
  absl::Duration max_stream_time = absl::Minutes(10);
  // A stream that moves no message for this long is cut off (a reader
  // that never reads, or a push that stalls, would hold its place until
  // max_stream_time); zero: never.
  absl::Duration stream_stall_time = absl::Seconds(30);
  // Streams, running or waiting, one caller (its certificate, or without
  // mutual TLS its connection) may hold in each bound; zero: no limit.
  int max_streams_per_caller = 4;
  // Update pushes at once: each holds one decoded update (a model's worth)
  // until it is checked and aggregated, so this bounds the server's memory
  // at O(model x max_inflight_updates) whatever the number of boards.
  // Pushes beyond it wait their turn, first come first served, their
  // headers checked; zero: no limit.
  int max_inflight_updates = 16;
  // After the last round the server keeps answering DONE while boards that
  // have not heard it may still ask: any heard from within `done_silence`
  // (a live board polls every few seconds, or retries with backoff), for
  // at most `done_grace`. A board that asks after that finds no server and
  // gives up by its own --give_up_after.
  absl::Duration done_grace = absl::Minutes(2);
  absl::Duration done_silence = absl::Seconds(30);
  // Continue a job from this state (a restarted server).
  std::optional<FederationSnapshot> restore;
  // Persists state after each round.
  SnapshotSink snapshot_sink;
  // The job's training plan (GetPlan, PullModelFile); empty: the built-in
  // image plan of coordinator.train.
  ServedPlan plan;
  // Transport security (security::MakeServerCredentials); null: plaintext.
  std::shared_ptr<grpc::ServerCredentials> credentials;
  // Who may call; the default admits every caller (no mutual TLS).
  security::AccessPolicy access;
};

class FederationServer {
 public:
  // Binds and starts serving. Unavailable when the address cannot be bound;
  // InvalidArgument when options.restore does not fit the initial model.
  static absl::StatusOr<std::unique_ptr<FederationServer>> Start(
      ServerOptions options, runtime::NamedTensors initial, Evaluator evaluator,
      ReportSink sink, Clock& clock = Clock::Real());
  ~FederationServer();  // Stop()s

  // The bound address, e.g. "127.0.0.1:40311".
  const std::string& address() const { return address_; }
  RoundCoordinator& coordinator() { return *coordinator_; }
  // The job's state and its stream bounds' figures (for /metrics).
  JobStatus Status() const;

  // Blocks until the job is done and clients were told (or the grace passed),
  // or Stop() was called.
  void Wait();
  // Ends the job now and stops serving. Idempotent.
  void Stop();

 private:
  FederationServer() = default;
  void Drive();
  // Cuts off stalled and overdue streams (StreamLimiter::CancelOverdue).
  void CancelOverdueStreams();
  // Sizes the transport's quota to the boards registered now.
  void SizeTransportQuota();

  ServerOptions options_;
  Clock* clock_ = &Clock::Real();  // Start's: the done grace is on it
  std::unique_ptr<RoundCoordinator> coordinator_;
  std::unique_ptr<StreamLimiter> streams_;
  std::unique_ptr<StreamLimiter> updates_;
  std::unique_ptr<StreamLimiter> headers_;
  std::unique_ptr<FederationService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::ResourceQuota> quota_;
  int quota_boards_ = -1;  // the board count quota_ was sized for (Drive)
  std::string address_;
  std::thread driver_;
  // Serialises Stop(): the signal watcher and main() may both call it, and
  // two concurrent joins of driver_ would be undefined (one hung forever).
  absl::Mutex stop_mu_;
  bool stop_done_ ABSL_GUARDED_BY(stop_mu_) = false;
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FEDERATION_SERVER_H_
