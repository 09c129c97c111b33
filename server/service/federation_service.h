// The gRPC face of the round coordinator: validates wire messages, decodes
// model streams and delegates. Holds no round state of its own. Its calls
// are defined by RPC family, each in its own file beside this one:
// join_rpcs.cc (GetPlan, Join), task_rpcs.cc (GetTask, Heartbeat),
// pull_rpcs.cc (PullModel, PullModelFile), push_rpcs.cc (PushUpdate),
// evaluation_rpcs.cc (ReportEvaluation), secagg_rpcs.cc (SecAggStep) and data_move_rpcs.cc (PushSamples,
// PullSamples); federation_service.cc has what they all go through
// (Authorize), call_helpers.h what they share in how they answer.
// Thread-safe (gRPC calls the handlers concurrently).
#ifndef FEDBERRY_SERVER_SERVICE_FEDERATION_SERVICE_H_
#define FEDBERRY_SERVER_SERVICE_FEDERATION_SERVICE_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "base/clock.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "security/access_policy.h"
#include "server/encoded_model_cache.h"
#include "server/round_coordinator.h"
#include "server/staging_pool.h"
#include "server/stream_limiter.h"

namespace fedberry::server {

// The job's training plan as the service hands it out: the plan, and the
// bytes of its model file (TorchScript; empty for a built-in model).
struct ServedPlan {
  v1::TrainingPlan plan;
  std::shared_ptr<const std::string> model_file;
};

// Every method is a callback (reactor) method, so no call holds a thread
// while it waits for a board or an event: GetTask is parked in the
// coordinator; the streams go a message at a time; PullSamples looks for
// its samples on a timer. The server's threads are gRPC's own, a few per
// core, however many boards are connected.
class FederationService final : public v1::Federation::CallbackService {
 public:
  // The bounds the service's streams are admitted into (see
  // StreamLimiter); a null one: no limit.
  struct StreamBounds {
    // Model and sample streams.
    StreamLimiter* streams = nullptr;
    // Update pushes (each holds a decoded update).
    StreamLimiter* updates = nullptr;
    // Update pushes until their header arrives: a push that never sends
    // one is cut off like a stalled stream.
    StreamLimiter* headers = nullptr;
  };

  // `coordinator` (and the bounds) must outlive the service.
  // GetTask long polls for at most `max_poll` (clients set their deadline
  // above it).
  // `plan`: what GetPlan answers; a plan without a model format stands for
  // the built-in image plan of the coordinator's TrainConfig.
  // `access`: who may call (every call is checked before it is served).
  // Poll and data-move deadlines are on `clock`.
  FederationService(RoundCoordinator& coordinator, absl::Duration max_poll,
                    StreamBounds bounds, ServedPlan plan = {},
                    security::AccessPolicy access = {},
                    Clock& clock = Clock::Real());

  grpc::ServerUnaryReactor* GetPlan(grpc::CallbackServerContext* context,
                                    const v1::GetPlanRequest* request,
                                    v1::GetPlanResponse* response) override;
  grpc::ServerWriteReactor<v1::ModelFileChunk>* PullModelFile(
      grpc::CallbackServerContext* context,
      const v1::PullModelFileRequest* request) override;
  grpc::ServerUnaryReactor* Join(grpc::CallbackServerContext* context,
                                 const v1::JoinRequest* request,
                                 v1::JoinResponse* response) override;
  grpc::ServerUnaryReactor* GetTask(grpc::CallbackServerContext* context,
                                    const v1::GetTaskRequest* request,
                                    v1::GetTaskResponse* response) override;
  grpc::ServerWriteReactor<v1::ModelChunk>* PullModel(
      grpc::CallbackServerContext* context,
      const v1::PullModelRequest* request) override;
  grpc::ServerReadReactor<v1::UpdateChunk>* PushUpdate(
      grpc::CallbackServerContext* context,
      v1::PushUpdateResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const v1::HeartbeatRequest* request,
                                      v1::HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* ReportEvaluation(
      grpc::CallbackServerContext* context, const v1::EvaluationReport* request,
      v1::ReportEvaluationResponse* response) override;
  grpc::ServerUnaryReactor* SecAggStep(grpc::CallbackServerContext* context,
                                       const v1::SecAggRequest* request,
                                       v1::SecAggResponse* response) override;
  grpc::ServerReadReactor<v1::SampleChunk>* PushSamples(
      grpc::CallbackServerContext* context,
      v1::PushSamplesResponse* response) override;
  grpc::ServerWriteReactor<v1::SampleChunk>* PullSamples(
      grpc::CallbackServerContext* context,
      const v1::PullSamplesRequest* request) override;

 private:
  // The streams' reactors, each defined beside its call (push_rpcs.cc,
  // data_move_rpcs.cc): nested, so they reach the service's parts.
  class UpdatePush;  // one PushUpdate call
  class SamplePush;  // one PushSamples call
  class SamplePull;  // one PullSamples call

  // Logs and counts a refused update (see RoundCoordinator::
  // CountRefusedUpdate) and returns its status for the wire.
  grpc::Status RefuseUpdate(const v1::UpdateHeader& header,
                            const absl::Status& status);
  // Admits the caller of `call` (AccessPolicy::Admit) and, for a call that
  // names `client_id`, checks the caller owns it. An unknown id passes, so
  // the call itself answers NotFound (and the board joins again).
  // `caller_key` (may be null) is set to whom the call's streams count
  // against: its certificate, or without one its connection.
  grpc::Status Authorize(grpc::ServerContextBase* context, const char* call,
                         const std::string& client_id = "",
                         std::string* caller_key = nullptr);

  RoundCoordinator& coordinator_;
  const absl::Duration max_poll_;
  StreamLimiter* const streams_;
  StreamLimiter* const updates_;
  StreamLimiter* const headers_;
  const ServedPlan plan_;
  const security::AccessPolicy access_;
  Clock& clock_;
  // Update pushes read into recycled tensors (at most 16 idle sets; pushes
  // in flight bound how many exist).
  StagingPool staging_{16};
  EncodedModelCache encoded_models_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_SERVICE_FEDERATION_SERVICE_H_
