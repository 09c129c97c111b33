// SHA-256 of bytes and files (OpenSSL), as lowercase hex: how a plan names
// its model file.
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_SHA256_H_
#define FEDBERRY_RUNTIME_SHA256_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace fedberry::runtime {

std::string Sha256Hex(absl::string_view bytes);
// NotFound / DataLoss naming the file when it cannot be read.
absl::StatusOr<std::string> Sha256OfFile(const std::string& path);
// 64 lowercase hex digits.
bool IsSha256Hex(absl::string_view text);

// SHA-256 of bytes that arrive in pieces (a download hashed as it is
// written, not read back afterwards).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(absl::string_view bytes);
  // The hash of everything so far, as lowercase hex; ends the stream.
  std::string Finish();

 private:
  ::evp_md_ctx_st* ctx_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_SHA256_H_
