#include "security/secagg_keys.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "pki/fleet_pki.h"
#include "pki/signatures.h"

namespace fedberry::security {
namespace {

absl::string_view Text(absl::Span<const uint8_t> bytes) {
  return absl::string_view(reinterpret_cast<const char*>(bytes.data()),
                           bytes.size());
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> FleetKeySigner::Sign(
    absl::Span<const uint8_t> bytes) {
  absl::StatusOr<std::string> signature =
      pki::SignWithKey(key_pem_, Text(bytes));
  if (!signature.ok()) return signature.status();
  return std::vector<uint8_t>(signature->begin(), signature->end());
}

absl::Status CertificateKeyVerifier::Record(uint32_t board,
                                            const std::string& cert_pem) {
  auto known = certificates_.find(board);
  if (known != certificates_.end()) {
    if (known->second == cert_pem) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "board ", board, " came with a second, different certificate"));
  }
  absl::StatusOr<pki::CertificateFacts> facts = pki::ReadCertificate(cert_pem);
  if (!facts.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "board ", board, "'s certificate: ", facts.status().message()));
  }
  if (!fleet_ca_pem_.empty()) {
    absl::Status chained = pki::VerifyCertificate(
        cert_pem, fleet_ca_pem_, clock_->Now(), pki::Role::kBoard);
    if (!chained.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "board ", board,
          "'s certificate is not a fleet board's: ", chained.message()));
    }
  }
  certificates_[board] = cert_pem;
  return absl::OkStatus();
}

std::string CertificateKeyVerifier::CertificateOf(uint32_t board) const {
  auto it = certificates_.find(board);
  return it == certificates_.end() ? std::string() : it->second;
}

absl::Status CertificateKeyVerifier::Verify(
    uint32_t board, absl::Span<const uint8_t> bytes,
    absl::Span<const uint8_t> signature) const {
  auto it = certificates_.find(board);
  if (it == certificates_.end()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "board ", board, "'s keys came without its fleet certificate"));
  }
  absl::Status verified =
      pki::VerifySignature(it->second, Text(bytes), Text(signature));
  if (!verified.ok()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "board ", board, "'s key signature does not match its certificate: ",
        verified.message()));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::security
