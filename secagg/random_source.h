// Where secure aggregation's secrets get their randomness. Key pairs,
// Shamir's polynomial coefficients, the share boxes' nonces and stochastic
// rounding all read a RandomSource passed in, so a test can pass a
// deterministic one (secagg/testing/fake_random.h) and pin what comes out.
// Production code passes OsRandom(): OpenSSL's RAND_bytes, its DRBG seeded
// from the operating system.
// Thread-safety: OsRandom() is thread-safe; other sources say.
#ifndef FEDBERRY_SECAGG_RANDOM_SOURCE_H_
#define FEDBERRY_SECAGG_RANDOM_SOURCE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace fedberry::secagg {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Fills `out` with uniform random bytes; Internal when the source fails
  // (then `out` must not be used).
  virtual absl::Status Fill(absl::Span<uint8_t> out) = 0;
};

// OpenSSL's RAND_bytes; one instance for the process, never destroyed.
RandomSource& OsRandom();

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_RANDOM_SOURCE_H_
