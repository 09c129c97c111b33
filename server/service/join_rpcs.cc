// The service's way in: GetPlan (the job's training plan, asked before
// every Join) and Join (a board registered, or refused at the door).
// Thread-safety: see federation_service.h.
#include <utility>

#include "proto/wire.h"
#include "runtime/training_plan.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

grpc::ServerUnaryReactor* FederationService::GetPlan(
    grpc::CallbackServerContext* context, const v1::GetPlanRequest* request,
    v1::GetPlanResponse* response) {
  if (grpc::Status ok = Authorize(context, "GetPlan"); !ok.ok()) {
    return AnswerNow(context, ok);
  }
  response->set_job_id(coordinator_.options().job_id);
  *response->mutable_plan() =
      plan_.plan.model_format().empty()
          ? runtime::DefaultImagePlan(coordinator_.options().train)
          : plan_.plan;
  return AnswerNow(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* FederationService::Join(
    grpc::CallbackServerContext* context, const v1::JoinRequest* request,
    v1::JoinResponse* response) {
  auto caller = access_.Admit(*context, "Join");
  if (!caller.ok())
    return AnswerNow(context, wire::ToGrpcStatus(caller.status()));
  if (absl::Status named = access_.CheckJoin(*caller, request->client_name());
      !named.ok()) {
    return AnswerNow(context, wire::ToGrpcStatus(named));
  }
  auto joined = coordinator_.Join(*request, caller->Owner());
  if (!joined.ok())
    return AnswerNow(context, wire::ToGrpcStatus(joined.status()));
  *response = *std::move(joined);
  return AnswerNow(context, grpc::Status::OK);
}

}  // namespace fedberry::server
