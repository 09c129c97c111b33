#include "client/testing/forged_signer.h"

namespace fedberry::client {

absl::StatusOr<std::vector<uint8_t>> ForgedSigner::Sign(
    absl::Span<const uint8_t> bytes) {
  absl::StatusOr<std::vector<uint8_t>> signature = honest_->Sign(bytes);
  if (!signature.ok()) return signature;
  if (signature->empty()) {
    signature->push_back(0x01);
  } else {
    signature->back() ^= 0x01;
  }
  return signature;
}

}  // namespace fedberry::client
