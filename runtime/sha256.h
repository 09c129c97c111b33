// SHA-256 of bytes and files (OpenSSL), as lowercase hex: how a plan names
// its model file.
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_SHA256_H_
#define FEDBERRY_RUNTIME_SHA256_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::runtime {

std::string Sha256Hex(absl::string_view bytes);
// NotFound / DataLoss naming the file when it cannot be read.
absl::StatusOr<std::string> Sha256OfFile(const std::string& path);
// 64 lowercase hex digits.
bool IsSha256Hex(absl::string_view text);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_SHA256_H_
