#include "secagg/key_agreement.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/openssl_errors.h"
#include "crypto/openssl_owners.h"

namespace fedberry::secagg {
namespace {

using crypto::KeyPtr;
using crypto::OpenSslError;

// Versioned, so a later change of derivation cannot collide with this one.
constexpr absl::string_view kTransportLabel =
    "fedberry secagg v1 share transport key";
constexpr absl::string_view kMaskSeedLabel = "fedberry secagg v1 mask seed";

absl::StatusOr<KeyPtr> PrivateKey(const X25519Key& private_key) {
  KeyPtr key(EVP_PKEY_new_raw_private_key(
      EVP_PKEY_X25519, nullptr, private_key.data(), private_key.size()));
  if (key == nullptr) return OpenSslError("X25519 private key not accepted");
  return key;
}

}  // namespace

absl::StatusOr<KeyPair> GenerateKeyPair(RandomSource& random) {
  X25519Key private_key;
  if (absl::Status s = random.Fill(absl::MakeSpan(private_key)); !s.ok()) {
    return s;
  }
  absl::StatusOr<KeyPair> pair = KeyPairFromPrivate(private_key);
  OPENSSL_cleanse(private_key.data(), private_key.size());
  return pair;
}

absl::StatusOr<KeyPair> KeyPairFromPrivate(const X25519Key& private_key) {
  absl::StatusOr<KeyPtr> key = PrivateKey(private_key);
  if (!key.ok()) return key.status();
  KeyPair pair;
  pair.private_key = private_key;
  size_t size = pair.public_key.size();
  if (EVP_PKEY_get_raw_public_key(key->get(), pair.public_key.data(), &size) !=
          1 ||
      size != pair.public_key.size()) {
    return OpenSslError("X25519 public key not computed");
  }
  return pair;
}

absl::StatusOr<Key256> Agree(const X25519Key& own_private,
                             const X25519Key& peer_public) {
  absl::StatusOr<KeyPtr> own = PrivateKey(own_private);
  if (!own.ok()) return own.status();
  KeyPtr peer(EVP_PKEY_new_raw_public_key(
      EVP_PKEY_X25519, nullptr, peer_public.data(), peer_public.size()));
  if (peer == nullptr) return OpenSslError("X25519 peer key not accepted");
  crypto::PkeyCtxPtr ctx(EVP_PKEY_CTX_new(own->get(), nullptr));
  if (ctx == nullptr || EVP_PKEY_derive_init(ctx.get()) != 1) {
    return OpenSslError("X25519 agreement not started");
  }
  Key256 secret{};
  size_t size = secret.size();
  // OpenSSL itself fails the derivation when the result is all zero; the
  // check below holds whatever the library does.
  const bool derived = EVP_PKEY_derive_set_peer(ctx.get(), peer.get()) == 1 &&
                       EVP_PKEY_derive(ctx.get(), secret.data(), &size) == 1 &&
                       size == secret.size();
  const Key256 zero{};
  if (!derived || CRYPTO_memcmp(secret.data(), zero.data(), zero.size()) == 0) {
    OPENSSL_cleanse(secret.data(), secret.size());
    return OpenSslError(
        "X25519 agreement refused: the peer's public key is a low-order "
        "point (the shared secret would be all zero)",
        absl::StatusCode::kInvalidArgument);
  }
  return secret;
}

absl::StatusOr<std::vector<uint8_t>> HkdfSha256(absl::Span<const uint8_t> ikm,
                                                absl::Span<const uint8_t> info,
                                                size_t size) {
  if (size < 1 || size > size_t{255} * 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "HKDF-SHA256 output of %d bytes; 1..8160 can be derived", size));
  }
  crypto::KdfPtr kdf(EVP_KDF_fetch(nullptr, OSSL_KDF_NAME_HKDF, nullptr));
  if (kdf == nullptr) return OpenSslError("HKDF not available");
  crypto::KdfCtxPtr ctx(EVP_KDF_CTX_new(kdf.get()));
  if (ctx == nullptr) return OpenSslError("HKDF context not made");
  char digest[] = "SHA256";
  // OSSL_PARAM wants non-const pointers; OpenSSL only reads these.
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(
          OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(ikm.data()), ikm.size()),
      OSSL_PARAM_construct_octet_string(
          OSSL_KDF_PARAM_INFO, const_cast<uint8_t*>(info.data()), info.size()),
      OSSL_PARAM_construct_end()};
  std::vector<uint8_t> out(size);
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    return OpenSslError("HKDF-SHA256 failed");
  }
  return out;
}

absl::StatusOr<Key256> DeriveKey(const Key256& shared_secret,
                                 KeyPurpose purpose,
                                 absl::string_view session) {
  const absl::string_view label =
      purpose == KeyPurpose::kShareTransport ? kTransportLabel : kMaskSeedLabel;
  // The label has no zero byte, so label + 0 + session is unambiguous.
  std::string info = absl::StrCat(label, absl::string_view("\0", 1), session);
  absl::StatusOr<std::vector<uint8_t>> okm = HkdfSha256(
      shared_secret,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(info.data()),
                          info.size()),
      32);
  if (!okm.ok()) return okm.status();
  Key256 key;
  std::copy(okm->begin(), okm->end(), key.begin());
  OPENSSL_cleanse(okm->data(), okm->size());
  return key;
}

}  // namespace fedberry::secagg
