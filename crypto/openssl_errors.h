// OpenSSL's per-thread error queue as status text: the reasons behind a
// failed call, drained so that one failure's reasons never show up in the
// next one's message.
// Thread-safety: no shared state (the error queue is per thread).
#ifndef FEDBERRY_CRYPTO_OPENSSL_ERRORS_H_
#define FEDBERRY_CRYPTO_OPENSSL_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fedberry::crypto {

// This thread's OpenSSL error queue as text ("reason; reason"; empty when
// it was empty), drained.
std::string DrainErrors();

// A status of `code` (Internal: an OpenSSL failure; InvalidArgument: bad
// input; ...) saying `what`, then " (OpenSSL: <the drained queue>)" when
// the queue held reasons.
absl::Status OpenSslError(absl::string_view what,
                          absl::StatusCode code = absl::StatusCode::kInternal);

}  // namespace fedberry::crypto

#endif  // FEDBERRY_CRYPTO_OPENSSL_ERRORS_H_
