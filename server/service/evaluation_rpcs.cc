// The service's evaluation answers: ReportEvaluation, a board's figures
// for a model the boards evaluate (or why it declines), handed to the
// coordinator.
// Thread-safety: see federation_service.h.
#include "proto/wire.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

grpc::ServerUnaryReactor* FederationService::ReportEvaluation(
    grpc::CallbackServerContext* context, const v1::EvaluationReport* request,
    v1::ReportEvaluationResponse* response) {
  grpc::Status ok =
      Authorize(context, "ReportEvaluation", request->client_id());
  return AnswerNow(
      context, ok.ok()
                   ? wire::ToGrpcStatus(coordinator_.ReportEvaluation(*request))
                   : ok);
}

}  // namespace fedberry::server
