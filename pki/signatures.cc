#include "pki/signatures.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "crypto/openssl_errors.h"
#include "pki/openssl_helpers.h"

namespace fedberry::pki {
namespace {

using internal::ParseFirstCertificate;
using internal::ParsePrivateKey;
using internal::X509Ptr;

// SHA-256 for keys that sign a digest; none for Ed25519 and Ed448, which
// sign the message itself.
const EVP_MD* DigestFor(EVP_PKEY* key) {
  const int id = EVP_PKEY_get_id(key);
  return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? nullptr
                                                        : EVP_sha256();
}

const unsigned char* Bytes(absl::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

absl::StatusOr<std::string> SignWithKey(const std::string& key_pem,
                                        absl::string_view bytes) {
  absl::StatusOr<crypto::KeyPtr> key = ParsePrivateKey(key_pem, "signing key");
  if (!key.ok()) return key.status();
  crypto::MdCtxPtr ctx(EVP_MD_CTX_new());
  size_t size = 0;
  if (!ctx ||
      EVP_DigestSignInit(ctx.get(), nullptr, DigestFor(key->get()), nullptr,
                         key->get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size, Bytes(bytes), bytes.size()) !=
          1) {
    return crypto::OpenSslError("cannot sign with the fleet key");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(&signature[0]),
                     &size, Bytes(bytes), bytes.size()) != 1) {
    return crypto::OpenSslError("cannot sign with the fleet key");
  }
  signature.resize(size);
  return signature;
}

absl::Status VerifySignature(const std::string& cert_pem,
                             absl::string_view bytes,
                             absl::string_view signature) {
  absl::StatusOr<X509Ptr> cert = ParseFirstCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  EVP_PKEY* key = X509_get0_pubkey(cert->get());
  crypto::MdCtxPtr ctx(EVP_MD_CTX_new());
  if (key == nullptr || !ctx ||
      EVP_DigestVerifyInit(ctx.get(), nullptr, DigestFor(key), nullptr, key) !=
          1) {
    return crypto::OpenSslError("cannot verify with the certificate's key");
  }
  const int ok = EVP_DigestVerify(ctx.get(), Bytes(signature), signature.size(),
                                  Bytes(bytes), bytes.size());
  ERR_clear_error();
  if (ok != 1) {
    return absl::PermissionDeniedError(
        "the signature does not verify with the certificate's key");
  }
  return absl::OkStatus();
}

}  // namespace fedberry::pki
