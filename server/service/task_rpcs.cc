// The service's ask-and-wait family: GetTask, a long poll that the
// coordinator answers at once or parks until an event or the caller's
// deadline (LongPollCall), and Heartbeat, a board's word on the task it trains.
// Thread-safety: see federation_service.h.
#include <cstdint>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "proto/wire.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

grpc::ServerUnaryReactor* FederationService::GetTask(
    grpc::CallbackServerContext* context, const v1::GetTaskRequest* request,
    v1::GetTaskResponse* response) {
  auto* poll =
      new LongPollCall<v1::GetTaskResponse>(coordinator_, response, "GetTask");
  if (grpc::Status ok = Authorize(context, "GetTask", request->client_id());
      !ok.ok()) {
    poll->Finish(ok);
    return poll;
  }
  const absl::Time deadline = clock_.Now() + PollBudget(context, max_poll_);
  poll->Start([&](auto answer, uint64_t& poll_id) {
    return coordinator_.PollTask(request->client_id(), request->condition(),
                                 deadline, std::move(answer), poll_id);
  });
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
