// Secure aggregation's key advertisements under mutual TLS, better than
// the reference SecAgg+, which leaves them unsigned: each board signs its
// temporary public keys with its fleet key (FleetKeySigner), the gateway
// checks the signature against the certificate the board's TLS handshake
// showed, and relays that certificate with the keys; each neighbour checks
// that the certificate chains to the fleet CA and that the signature
// verifies with it (CertificateKeyVerifier). A gateway that swaps a board's
// keys for its own cannot sign them as that board.
// Thread-safety: FleetKeySigner is thread-safe; CertificateKeyVerifier is
// thread-compatible (its owner's lock guards Record and Verify).
#ifndef FEDBERRY_SECURITY_SECAGG_KEYS_H_
#define FEDBERRY_SECURITY_SECAGG_KEYS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "secagg/session_messages.h"

namespace fedberry::security {

// Signs with the board's fleet private key (PEM, the --tls_key file's).
class FleetKeySigner final : public secagg::KeySigner {
 public:
  explicit FleetKeySigner(std::string key_pem) : key_pem_(std::move(key_pem)) {}
  absl::StatusOr<std::vector<uint8_t>> Sign(
      absl::Span<const uint8_t> bytes) override;

 private:
  std::string key_pem_;
};

class CertificateKeyVerifier final : public secagg::KeyVerifier {
 public:
  // `fleet_ca_pem` empty: the certificates recorded were verified already
  // (the gateway's, from TLS handshakes); otherwise each must chain to it
  // and be a board's (a board's check of what the gateway relays), at
  // `clock`'s time.
  CertificateKeyVerifier(std::string fleet_ca_pem, Clock& clock)
      : fleet_ca_pem_(std::move(fleet_ca_pem)), clock_(&clock) {}

  // `board`'s certificate (PEM). PermissionDenied naming the board when it
  // does not chain to the fleet CA or is no board's; InvalidArgument when
  // it does not parse or another was recorded for the board.
  absl::Status Record(uint32_t board, const std::string& cert_pem);
  // The certificate recorded for `board`; empty when none.
  std::string CertificateOf(uint32_t board) const;
  void Clear() { certificates_.clear(); }

  // OK when `signature` over `bytes` verifies with `board`'s certificate;
  // PermissionDenied naming the board when none was recorded for it or it
  // does not verify.
  absl::Status Verify(uint32_t board, absl::Span<const uint8_t> bytes,
                      absl::Span<const uint8_t> signature) const override;

 private:
  std::string fleet_ca_pem_;
  Clock* clock_;
  std::map<uint32_t, std::string> certificates_;
};

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_SECAGG_KEYS_H_
