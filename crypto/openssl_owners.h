// unique_ptr owners for the OpenSSL objects more than one module holds:
// FreeWith turns an OpenSSL free function into a deleter, and the aliases
// below name the libcrypto (EVP) objects secagg and pki own. A module's
// own owners (pki's X509 family) are made with FreeWith beside its code.
// Thread-safety: an owner is as thread-safe as the object it owns.
#ifndef FEDBERRY_CRYPTO_OPENSSL_OWNERS_H_
#define FEDBERRY_CRYPTO_OPENSSL_OWNERS_H_

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <memory>

namespace fedberry::crypto {

// A unique_ptr deleter calling OpenSSL's `kFree` (EVP_PKEY_free, ...).
template <auto kFree>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    kFree(p);
  }
};

using CipherCtxPtr =
    std::unique_ptr<EVP_CIPHER_CTX, FreeWith<EVP_CIPHER_CTX_free>>;
using KdfCtxPtr = std::unique_ptr<EVP_KDF_CTX, FreeWith<EVP_KDF_CTX_free>>;
using KdfPtr = std::unique_ptr<EVP_KDF, FreeWith<EVP_KDF_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, FreeWith<EVP_MD_CTX_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, FreeWith<EVP_PKEY_CTX_free>>;

}  // namespace fedberry::crypto

#endif  // FEDBERRY_CRYPTO_OPENSSL_OWNERS_H_
