// Internal to secagg, not part of its API: OpenSSL's per-thread error queue
// as status text, and owners for the OpenSSL objects secagg's .cc files use.
// Thread-safety: no shared state (the error queue is per thread).
#ifndef FEDBERRY_SECAGG_OPENSSL_ERRORS_H_
#define FEDBERRY_SECAGG_OPENSSL_ERRORS_H_

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fedberry::secagg::internal {

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
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, FreeWith<EVP_PKEY_CTX_free>>;

// This thread's OpenSSL error queue as text, drained, so one failure's
// reasons never show up in the next one's message.
std::string DrainErrors();

// Internal: `what`, then the drained queue.
absl::Status OpenSslError(absl::string_view what);

}  // namespace fedberry::secagg::internal

#endif  // FEDBERRY_SECAGG_OPENSSL_ERRORS_H_
