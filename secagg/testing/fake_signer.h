// Stand-ins for the fleet certificates that will sign SecAgg+ key
// advertisements: each board's key is HMAC-SHA256(fleet secret, board id),
// and a "signature" is HMAC-SHA256(board key, bytes). Anyone holding the
// fleet secret can forge, so this is for tests only; what it exercises is
// that both sides sign and check, and that a bad signature is refused.
// Never linked by a binary.
// Thread-safety: const after construction; thread-safe.
#ifndef FEDBERRY_SECAGG_TESTING_FAKE_SIGNER_H_
#define FEDBERRY_SECAGG_TESTING_FAKE_SIGNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "secagg/session_messages.h"

namespace fedberry::secagg::testing {

class HmacSigner : public KeySigner {
 public:
  HmacSigner(std::string fleet_secret, uint32_t board)
      : fleet_secret_(std::move(fleet_secret)), board_(board) {}
  absl::StatusOr<std::vector<uint8_t>> Sign(
      absl::Span<const uint8_t> bytes) override;

 private:
  std::string fleet_secret_;
  uint32_t board_;
};

class HmacVerifier : public KeyVerifier {
 public:
  explicit HmacVerifier(std::string fleet_secret)
      : fleet_secret_(std::move(fleet_secret)) {}
  // PermissionDenied when the signature is not board's HMAC of the bytes.
  absl::Status Verify(uint32_t board, absl::Span<const uint8_t> bytes,
                      absl::Span<const uint8_t> signature) const override;

 private:
  std::string fleet_secret_;
};

}  // namespace fedberry::secagg::testing

#endif  // FEDBERRY_SECAGG_TESTING_FAKE_SIGNER_H_
