#include "security/board_certificate_verifier.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "pki/fleet_pki.h"
#include "security/tls_credentials.h"

namespace fedberry::security {
namespace {

class BoardCertificateVerifier
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  BoardCertificateVerifier(std::string client_ca_path, Clock& clock)
      : client_ca_path_(std::move(client_ca_path)), clock_(clock) {}

  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/,
              grpc::Status* sync_status) override {
    // The leaf first; the rest of what the board sent (which may or may
    // not repeat the leaf) only as untrusted intermediates.
    const grpc::string_ref leaf = request->peer_cert();
    const grpc::string_ref chain = request->peer_cert_full_chain();
    absl::Status checked = CheckBoardCertificate(
        absl::StrCat(absl::string_view(leaf.data(), leaf.size()),
                     absl::string_view(chain.data(), chain.size())),
        client_ca_path_, clock_.Now());
    if (checked.ok()) {
      *sync_status = grpc::Status::OK;
    } else {
      spdlog::warn("{}", std::string(checked.message()));
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                  std::string(checked.message()));
    }
    return true;  // decided synchronously
  }

  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {
  }

 private:
  const std::string client_ca_path_;
  Clock& clock_;
};

}  // namespace

absl::Status CheckBoardCertificate(const std::string& chain_pem,
                                   const std::string& client_ca_path,
                                   absl::Time now) {
  auto facts = pki::ReadCertificate(chain_pem);
  if (!facts.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("refused a TLS handshake: the board's certificate does "
                     "not parse (",
                     facts.status().message(), ")"));
  }
  const std::string who =
      absl::StrCat("board '", base::Printable(facts->common_name, 80),
                   "' (serial ", facts->serial_hex, ", issuer '",
                   base::Printable(facts->issuer, 120), "')");
  auto ca = ReadPemFile(client_ca_path, "client_ca");
  if (!ca.ok()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "refused a TLS handshake from ", who, ": ", ca.status().message()));
  }
  absl::Status verified =
      pki::VerifyCertificate(chain_pem, *ca, now, pki::Role::kBoard);
  if (!verified.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("refused a TLS handshake from ", who, ": ",
                     base::Printable(verified.message(), 300)));
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::experimental::CertificateVerifier>
MakeBoardCertificateVerifier(std::string client_ca_path, Clock& clock) {
  return grpc::experimental::ExternalCertificateVerifier::Create<
      BoardCertificateVerifier>(std::move(client_ca_path), clock);
}

}  // namespace fedberry::security
