// A test instrument for secure aggregation: a board whose key signature
// does not match its certificate. It signs as the board would, then flips
// one bit of the signature (an unsigned board's empty one becomes one
// byte), as a party without the board's fleet key would have to guess it.
// Thread-safety: as the signer it wraps.
#ifndef FEDBERRY_CLIENT_TESTING_FORGED_SIGNER_H_
#define FEDBERRY_CLIENT_TESTING_FORGED_SIGNER_H_

#include <memory>
#include <vector>

#include "secagg/session_messages.h"

namespace fedberry::client {

class ForgedSigner final : public secagg::KeySigner {
 public:
  explicit ForgedSigner(std::unique_ptr<secagg::KeySigner> honest)
      : honest_(std::move(honest)) {}
  absl::StatusOr<std::vector<uint8_t>> Sign(
      absl::Span<const uint8_t> bytes) override;

 private:
  std::unique_ptr<secagg::KeySigner> honest_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_TESTING_FORGED_SIGNER_H_
