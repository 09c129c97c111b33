#include "crypto/openssl_errors.h"

#include <openssl/err.h>

#include "absl/strings/str_cat.h"

namespace fedberry::crypto {

std::string DrainErrors() {
  std::string text;
  // unsigned long is ERR_get_error's own type.
  // NOLINTNEXTLINE(google-runtime-int)
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    absl::StrAppend(&text, text.empty() ? "" : "; ", buffer);
  }
  return text;
}

absl::Status OpenSslError(absl::string_view what, absl::StatusCode code) {
  const std::string queue = DrainErrors();
  return absl::Status(
      code, queue.empty() ? std::string(what)
                          : absl::StrCat(what, " (OpenSSL: ", queue, ")"));
}

}  // namespace fedberry::crypto
