#include "security/peer_identity.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "pki/fleet_pki.h"

namespace fedberry::security {
namespace {

std::string First(const grpc::AuthContext& auth, const char* property) {
  std::vector<grpc::string_ref> values = auth.FindPropertyValues(property);
  if (values.empty()) return "";
  return std::string(values.front().data(), values.front().size());
}

}  // namespace

bool PeerIdentity::Names(const std::string& board_name) const {
  return authenticated && !board_name.empty() &&
         std::find(names.begin(), names.end(), board_name) != names.end();
}

std::string PeerIdentity::Describe() const {
  const std::string where = base::Printable(address, 80);
  if (!authenticated) return where;
  return absl::StrCat("'", base::Printable(name, 80), "' (", where, ")");
}

std::string PeerIdentity::Owner() const {
  if (authenticated) return absl::StrCat("cert:", sha256_fingerprint);
  const size_t port = address.rfind(':');
  const size_t scheme = address.find(':');
  return absl::StrCat("host:", port != std::string::npos && port > scheme
                                   ? address.substr(0, port)
                                   : address);
}

PeerIdentity IdentityOf(const grpc::ServerContextBase& context) {
  PeerIdentity identity;
  identity.address = context.peer();
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return identity;
  // "tls" under grpc::experimental::TlsCredentials, "ssl" under the older
  // SslCredentials: both are X.509 over TLS.
  const std::string type =
      First(*auth, GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  if (type != "tls" && type != "ssl") return identity;
  // gRPC sets the peer identity properties only for a certificate the
  // handshake verified; the PEM gives the serial and fingerprint.
  std::string pem = First(*auth, GRPC_X509_PEM_CERT_PROPERTY_NAME);
  auto facts = pki::ReadCertificate(pem);
  if (!facts.ok()) return identity;
  identity.authenticated = true;
  identity.certificate_pem = std::move(pem);
  if (!facts->common_name.empty()) identity.names.push_back(facts->common_name);
  for (const std::string& dns : facts->dns_names) {
    if (std::find(identity.names.begin(), identity.names.end(), dns) ==
        identity.names.end()) {
      identity.names.push_back(dns);
    }
  }
  identity.name = identity.names.empty() ? "" : identity.names.front();
  identity.serial_hex = facts->serial_hex;
  identity.sha256_fingerprint = facts->sha256_fingerprint;
  return identity;
}

}  // namespace fedberry::security
