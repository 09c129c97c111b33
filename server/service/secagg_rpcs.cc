// The service's secure-aggregation stages: SecAggStep, a board's message of
// one stage of its round's SecAgg+ session, or its wait for the next
// stage's input, handed to the coordinator.
// Thread-safety: see federation_service.h.
#include <string>

#include "proto/wire.h"
#include "security/peer_identity.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

grpc::ServerUnaryReactor* FederationService::SecAggStep(
    grpc::CallbackServerContext* context, const v1::SecAggRequest* request,
    v1::SecAggResponse* response) {
  grpc::Status ok = Authorize(context, "SecAggStep", request->client_id());
  if (!ok.ok()) return AnswerNow(context, ok);
  // Only a keys message is checked against the caller's certificate: the
  // waits, polled every few hundred ms, need not parse it again.
  const std::string certificate =
      request->has_keys() ? security::IdentityOf(*context).certificate_pem
                          : std::string();
  absl::StatusOr<v1::SecAggResponse> answer =
      coordinator_.SecAggStep(*request, certificate);
  if (answer.ok()) *response = *std::move(answer);
  return AnswerNow(context, wire::ToGrpcStatus(answer.status()));
}

}  // namespace fedberry::server
