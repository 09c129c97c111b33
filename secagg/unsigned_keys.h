// Advertisements without signatures, for fleets without certificates (no
// mutual TLS): the board signs nothing and the gateway takes only empty
// signatures. As in the reference SecAgg+, nothing then binds a board's
// keys to the board but the channel the gateway heard them on.
// Thread-safety: stateless.
#ifndef FEDBERRY_SECAGG_UNSIGNED_KEYS_H_
#define FEDBERRY_SECAGG_UNSIGNED_KEYS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "secagg/session_messages.h"

namespace fedberry::secagg {

class UnsignedKeys final : public KeySigner, public KeyVerifier {
 public:
  absl::StatusOr<std::vector<uint8_t>> Sign(
      absl::Span<const uint8_t> bytes) override {
    return std::vector<uint8_t>{};
  }
  absl::Status Verify(uint32_t board, absl::Span<const uint8_t> bytes,
                      absl::Span<const uint8_t> signature) const override {
    if (signature.empty()) return absl::OkStatus();
    return absl::PermissionDeniedError(absl::StrCat(
        "board ", board, " signed its keys, but this gateway has no fleet "
        "certificates to check signatures with"));
  }
};

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_UNSIGNED_KEYS_H_
