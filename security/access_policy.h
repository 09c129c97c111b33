// Decides whether a caller may use the federation service. Under mutual TLS
// every call needs a verified client certificate that is not revoked, a
// board joins only under a name its certificate lists, and a call that
// names a client id must come from the certificate that joined under it:
// one board cannot push, pull or heartbeat as another. Without mutual TLS
// every caller is admitted (client ids are then the only secret).
// Thread-safety: thread-safe.
#ifndef FEDBERRY_SECURITY_ACCESS_POLICY_H_
#define FEDBERRY_SECURITY_ACCESS_POLICY_H_

#include <grpcpp/grpcpp.h>

#include <string>

#include "absl/status/statusor.h"
#include "security/peer_identity.h"
#include "security/revocation_list.h"

namespace fedberry::security {

class AccessPolicy {
 public:
  // No checks: plaintext, or TLS without client certificates.
  AccessPolicy() = default;
  // Mutual TLS; `revoked` (may be null) must outlive the policy.
  static AccessPolicy MutualTls(const RevocationList* revoked);

  bool requires_identity() const { return mutual_tls_; }

  // The caller, admitted. Unauthenticated without a verified certificate,
  // PermissionDenied for a revoked one; the refusal is logged with the peer.
  absl::StatusOr<PeerIdentity> Admit(const grpc::ServerContextBase& context,
                                     const char* call) const;
  // Join under `board_name`: PermissionDenied unless the caller's
  // certificate lists that name.
  absl::Status CheckJoin(const PeerIdentity& caller,
                         const std::string& board_name) const;
  // A call for the client registered as `owner_name` (the name it joined
  // under): PermissionDenied unless the caller's certificate lists it.
  absl::Status CheckOwner(const PeerIdentity& caller,
                          const std::string& client_id,
                          const std::string& owner_name,
                          const char* call) const;

 private:
  bool mutual_tls_ = false;
  const RevocationList* revoked_ = nullptr;
};

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_ACCESS_POLICY_H_
