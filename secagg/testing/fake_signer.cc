#include "secagg/testing/fake_signer.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/strings/str_format.h"

namespace fedberry::secagg::testing {
namespace {

std::vector<uint8_t> HmacSha256(absl::Span<const uint8_t> key,
                                absl::Span<const uint8_t> bytes) {
  std::vector<uint8_t> mac(32);
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes.data(),
           bytes.size(), mac.data(), &size) == nullptr) {
    mac.clear();  // an empty signature never verifies
  }
  return mac;
}

std::vector<uint8_t> BoardKey(const std::string& fleet_secret, uint32_t board) {
  const uint8_t id[4] = {
      static_cast<uint8_t>(board), static_cast<uint8_t>(board >> 8),
      static_cast<uint8_t>(board >> 16), static_cast<uint8_t>(board >> 24)};
  return HmacSha256(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(fleet_secret.data()),
                          fleet_secret.size()),
      id);
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> HmacSigner::Sign(
    absl::Span<const uint8_t> bytes) {
  std::vector<uint8_t> mac = HmacSha256(BoardKey(fleet_secret_, board_), bytes);
  if (mac.empty()) return absl::InternalError("HMAC-SHA256 failed");
  return mac;
}

absl::Status HmacVerifier::Verify(uint32_t board,
                                  absl::Span<const uint8_t> bytes,
                                  absl::Span<const uint8_t> signature) const {
  const std::vector<uint8_t> mac =
      HmacSha256(BoardKey(fleet_secret_, board), bytes);
  if (mac.empty() || signature.size() != mac.size() ||
      CRYPTO_memcmp(mac.data(), signature.data(), mac.size()) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "the signature (%d bytes) is not board %d's", signature.size(), board));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::secagg::testing
