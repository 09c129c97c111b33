// The service's ask-and-wait family: GetTask, a long poll that the
// coordinator answers at once or parks until an event or the caller's
// deadline (TaskPoll), and Heartbeat, a board's word on the task it trains.
// Thread-safety: see federation_service.h.
#include <cstdint>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "proto/wire.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {
namespace {

// One GetTask call: answered at once, or parked in the coordinator until
// an event or its deadline; a caller that goes away takes its poll back.
// Deletes itself when gRPC is done with the call.
class TaskPoll final : public grpc::ServerUnaryReactor {
 public:
  TaskPoll(RoundCoordinator& coordinator, v1::GetTaskResponse* response)
      : coordinator_(coordinator), response_(response) {}

  void Start(const v1::GetTaskRequest& request, absl::Time deadline) {
    absl::MutexLock lock(&mu_);  // an early answer waits for poll_id_
    auto now = coordinator_.PollTask(
        request.client_id(), request.condition(), deadline,
        [this](absl::StatusOr<v1::GetTaskResponse> task) {
          { absl::MutexLock lock(&mu_); }
          Answer(std::move(task));
        },
        poll_id_);
    if (now) Answer(*std::move(now));
  }

  void OnCancel() override {
    uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = poll_id_;
    }
    if (id != 0 && coordinator_.CancelTaskPoll(id)) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the caller went away during GetTask"));
    }
  }

  void OnDone() override { delete this; }

 private:
  void Answer(absl::StatusOr<v1::GetTaskResponse> task) {
    if (!task.ok()) {
      Finish(wire::ToGrpcStatus(task.status()));
      return;
    }
    *response_ = *std::move(task);
    Finish(grpc::Status::OK);
  }

  RoundCoordinator& coordinator_;
  v1::GetTaskResponse* const response_;
  absl::Mutex mu_;
  uint64_t poll_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

grpc::ServerUnaryReactor* FederationService::GetTask(
    grpc::CallbackServerContext* context, const v1::GetTaskRequest* request,
    v1::GetTaskResponse* response) {
  auto* poll = new TaskPoll(coordinator_, response);
  if (grpc::Status ok = Authorize(context, "GetTask", request->client_id());
      !ok.ok()) {
    poll->Finish(ok);
    return poll;
  }
  poll->Start(*request, clock_.Now() + PollBudget(context, max_poll_));
  return poll;
}

grpc::ServerUnaryReactor* FederationService::Heartbeat(
    grpc::CallbackServerContext* context, const v1::HeartbeatRequest* request,
    v1::HeartbeatResponse* response) {
  grpc::Status ok = Authorize(context, "Heartbeat", request->client_id());
  return AnswerNow(
      context,
      ok.ok() ? wire::ToGrpcStatus(coordinator_.Heartbeat(*request)) : ok);
}

}  // namespace fedberry::server
