// FederationService's construction and Authorize, which every call goes
// through before it is served. The calls themselves are in the RPC
// families' files beside this one (see federation_service.h).
#include "server/service/federation_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "proto/wire.h"

namespace fedberry::server {

FederationService::FederationService(RoundCoordinator& coordinator,
                                     absl::Duration max_poll,
                                     StreamBounds bounds, ServedPlan plan,
                                     security::AccessPolicy access,
                                     Clock& clock)
    : coordinator_(coordinator),
      max_poll_(max_poll),
      streams_(bounds.streams),
      updates_(bounds.updates),
      headers_(bounds.headers),
      plan_(std::move(plan)),
      access_(access),
      clock_(clock) {}

grpc::Status FederationService::Authorize(grpc::ServerContextBase* context,
                                          const char* call,
                                          const std::string& client_id,
                                          std::string* caller_key) {
  auto caller = access_.Admit(*context, call);
  if (!caller.ok()) return wire::ToGrpcStatus(caller.status());
  if (caller_key != nullptr) {
    // A certificate is one board wherever it connects from; without one, a
    // connection is all the server knows (boards behind one address, or
    // emulated on one machine, share it).
    *caller_key =
        caller->authenticated
            ? absl::StrCat("certificate ", base::Printable(caller->name))
            : absl::StrCat("connection ", base::Printable(context->peer()));
  }
  if (client_id.empty() || !access_.requires_identity()) {
    return grpc::Status::OK;
  }
  auto owner = coordinator_.NameOf(client_id);
  if (!owner.ok()) return grpc::Status::OK;
  return wire::ToGrpcStatus(
      access_.CheckOwner(*caller, client_id, *owner, call));
}

}  // namespace fedberry::server
