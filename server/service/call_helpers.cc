#include "server/service/call_helpers.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/wire.h"

namespace fedberry::server {

grpc::ServerUnaryReactor* AnswerNow(grpc::CallbackServerContext* context,
                                    const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

absl::Duration PollBudget(grpc::ServerContextBase* context,
                          absl::Duration max) {
  auto left = context->deadline() - std::chrono::system_clock::now();
  absl::Duration remaining = absl::FromChrono(left) - absl::Milliseconds(500);
  return std::clamp(remaining, absl::ZeroDuration(), max);
}

std::string StreamName(const char* what, const std::string& caller) {
  return absl::StrCat(what, " of ", caller);
}

grpc::Status AdmitInto(StreamLimiter* streams, const std::string& caller,
                       const char* what,
                       const std::shared_ptr<CallCanceller>& canceller,
                       std::optional<StreamLimiter::Ticket>& into) {
  if (streams == nullptr) return grpc::Status::OK;
  auto ticket = streams->Admit(StreamName(what, caller), caller,
                               CallCanceller::CallbackOf(canceller));
  if (!ticket.ok()) return wire::ToGrpcStatus(ticket.status());
  into.emplace(*std::move(ticket));
  return grpc::Status::OK;
}

}  // namespace fedberry::server
