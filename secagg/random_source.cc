#include "secagg/random_source.h"

#include <openssl/rand.h>

#include <algorithm>
#include <climits>

#include "crypto/openssl_errors.h"

namespace fedberry::secagg {
namespace {

class OpenSslRandom : public RandomSource {
 public:
  absl::Status Fill(absl::Span<uint8_t> out) override {
    // RAND_bytes takes an int length; larger requests go in pieces.
    while (!out.empty()) {
      const size_t piece = std::min<size_t>(out.size(), INT_MAX);
      if (RAND_bytes(out.data(), static_cast<int>(piece)) != 1) {
        return crypto::OpenSslError("RAND_bytes failed");
      }
      out.remove_prefix(piece);
    }
    return absl::OkStatus();
  }
};

}  // namespace

RandomSource& OsRandom() {
  static auto* const random = new OpenSslRandom();
  return *random;
}

}  // namespace fedberry::secagg
