#include "security/access_policy.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"

namespace fedberry::security {

AccessPolicy AccessPolicy::MutualTls(const RevocationList* revoked) {
  AccessPolicy policy;
  policy.mutual_tls_ = true;
  policy.revoked_ = revoked;
  return policy;
}

absl::StatusOr<PeerIdentity> AccessPolicy::Admit(
    const grpc::ServerContextBase& context, const char* call) const {
  PeerIdentity caller = IdentityOf(context);
  if (!mutual_tls_) return caller;
  if (!caller.authenticated || caller.name.empty()) {
    spdlog::warn("refused {} from {}: no verified client certificate", call,
                 caller.Describe());
    return absl::UnauthenticatedError(
        "this server takes only boards with a certificate from its fleet CA "
        "(--tls_cert and --tls_key on the client)");
  }
  if (revoked_ != nullptr) {
    if (std::optional<std::string> why = revoked_->Revokes(caller)) {
      spdlog::warn("refused {} from {}: {}", call, caller.Describe(), *why);
      return absl::PermissionDeniedError(absl::StrCat(
          "board '", base::Printable(caller.name, 80),
          "' is revoked by the fleet (certificate serial ", caller.serial_hex,
          "): ask the fleet operator for a new certificate"));
    }
  }
  return caller;
}

absl::Status AccessPolicy::CheckJoin(const PeerIdentity& caller,
                                     const std::string& board_name) const {
  if (!mutual_tls_ || caller.Names(board_name)) return absl::OkStatus();
  spdlog::warn("refused Join from {}: it asked to join as '{}'",
               caller.Describe(), base::Printable(board_name, 80));
  return absl::PermissionDeniedError(absl::StrCat(
      "this board's certificate names it '", base::Printable(caller.name, 80),
      "'; it cannot join as '", base::Printable(board_name, 80),
      "' (leave --name empty, or set it to the certificate's name)"));
}

absl::Status AccessPolicy::CheckOwner(const PeerIdentity& caller,
                                      const std::string& client_id,
                                      const std::string& owner_name,
                                      const char* call) const {
  if (!mutual_tls_ || caller.Names(owner_name)) return absl::OkStatus();
  spdlog::warn("refused {} from {}: client id {} belongs to '{}'", call,
               caller.Describe(), base::Printable(client_id, 80),
               base::Printable(owner_name, 80));
  return absl::PermissionDeniedError(
      absl::StrCat("client id '", base::Printable(client_id, 80),
                   "' was not issued to this board's certificate ('",
                   base::Printable(caller.name, 80), "')"));
}

}  // namespace fedberry::security
