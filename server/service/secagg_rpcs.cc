// The service's secure-aggregation stages: SecAggStep, a board's message of
// one stage of its round's SecAgg+ session, or its wait for the next
// stage's input, handed to the coordinator; a wait is a long poll
// (LongPollCall) that the coordinator answers when the stage closes.
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
  auto* call = new LongPollCall<v1::SecAggResponse>(coordinator_, response,
                                                    "SecAggStep");
  if (grpc::Status ok = Authorize(context, "SecAggStep", request->client_id());
      !ok.ok()) {
    call->Finish(ok);
    return call;
  }
  // Only a keys message is checked against the caller's certificate: the
  // other messages and the waits need not parse it again.
  const std::string certificate =
      request->has_keys() ? security::IdentityOf(*context).certificate_pem
                          : std::string();
  const absl::Time deadline = clock_.Now() + PollBudget(context, max_poll_);
  call->Start([&](auto answer, uint64_t& poll_id) {
    return coordinator_.PollSecAggStep(*request, certificate, deadline,
                                       std::move(answer), poll_id);
  });
  return call;
}

}  // namespace fedberry::server
