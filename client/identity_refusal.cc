#include "client/identity_refusal.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fedberry::client {
namespace {

bool Mentions(const std::string& lower, const char* what) {
  return absl::StrContains(lower, what);
}

}  // namespace

bool IsHandshakeFailure(const absl::Status& status) {
  if (!absl::IsUnavailable(status)) return false;
  const std::string m = absl::AsciiStrToLower(status.message());
  return Mentions(m, "handshake") || Mentions(m, "ssl") ||
         Mentions(m, "certificate") || Mentions(m, "tls");
}

bool IsIdentityRefusal(const absl::Status& status) {
  return absl::IsPermissionDenied(status) || absl::IsUnauthenticated(status) ||
         IsHandshakeFailure(status);
}

std::string IdentityAdvice(const absl::Status& status) {
  const std::string m = absl::AsciiStrToLower(status.message());
  // The server's refusals and the probe's explanations say what to fix.
  if (absl::IsPermissionDenied(status) || absl::IsUnauthenticated(status)) {
    return absl::StrCat("this board cannot take part: ", status.message());
  }
  std::string fix;
  if (Mentions(m, "expired")) {
    fix =
        "a certificate has expired: this board's (--tls_cert) or the "
        "server's; ask the fleet operator for a new one, and check this "
        "board's clock";
  } else if (Mentions(m, "peer name") || Mentions(m, "hostname") ||
             Mentions(m, "name mismatch") || Mentions(m, "san")) {
    fix =
        "the server's certificate does not list the host in --server: "
        "dial a name it lists, or set --tls_server_name";
  } else if (Mentions(m, "unknown ca") || Mentions(m, "unknown_ca") ||
             Mentions(m, "certificate_required") ||
             Mentions(m, "certificate required") ||
             Mentions(m, "bad certificate") || Mentions(m, "bad_certificate")) {
    fix =
        "the server does not accept this board's certificate: it needs "
        "one from the fleet CA (--tls_cert/--tls_key, fedberry-pki board "
        "NAME)";
  } else if (Mentions(m, "verify") || Mentions(m, "local issuer")) {
    fix =
        "the server's certificate is not signed by --tls_ca: use the fleet "
        "CA's certificate";
  } else if (Mentions(m, "wrong_version") || Mentions(m, "wrong version") ||
             Mentions(m, "record") || Mentions(m, "packet length")) {
    fix =
        "one side speaks TLS and the other plaintext: give the board "
        "--tls_ca for a TLS server, or drop it for a plaintext one";
  } else {
    fix =
        "the TLS handshake with the server failed: check --tls_ca, "
        "--tls_cert, --tls_key and --server against the server's "
        "certificates";
  }
  return absl::StrCat("this board cannot take part: ", status.message(), " -- ",
                      fix);
}

}  // namespace fedberry::client
