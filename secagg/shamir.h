// Shamir secret sharing of byte strings (X25519 private keys, 32-byte mask
// seeds) for secure aggregation: any `threshold` of the `n` shares give the
// secret back, fewer say nothing about it.
//
// The field is GF(p) with p = 2^61 - 1 (a Mersenne prime: a product of two
// elements fits in unsigned __int128 and reduces with shifts and adds). A
// secret is cut into 7-byte chunks, each read as a little-endian integer
// below 2^56 < p, and each chunk is shared with its own polynomial; a share
// carries one field element per chunk (5 for a 32-byte secret). 2^127 - 1
// would take 3 elements instead of 5 but needs 256-bit products; at the
// thresholds SecAgg+ uses (tens) the smaller field costs nothing that
// matters.
//
// What Shamir can detect: with more than `threshold` shares, Reconstruct
// checks that every share lies on the polynomial the first `threshold`
// define, so one altered share among them is always caught (DataLoss).
// With exactly `threshold` shares any values define some polynomial: an
// altered share gives another secret. Chunks only fill 56 of the 61 bits,
// so a random alteration is usually caught by the range check on the
// result, but one chosen to keep it in range is not. Integrity comes from
// elsewhere: shares travel in authenticated share boxes, and a
// reconstructed private key can be checked against its advertised public
// key.
//
// Thread-safety: functions without shared state.
#ifndef FEDBERRY_SECAGG_SHAMIR_H_
#define FEDBERRY_SECAGG_SHAMIR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/random_source.h"

namespace fedberry::secagg {

inline constexpr uint64_t kShamirPrime = (uint64_t{1} << 61) - 1;
inline constexpr size_t kShamirChunkBytes = 7;
// Bounds that keep a share's size and Reconstruct's O(t^2) work small.
inline constexpr int kMaxShamirShares = 65535;
inline constexpr size_t kMaxShamirSecretBytes = 1024;

struct Share {
  uint32_t index = 0;        // the evaluation point x, in 1..n
  uint32_t secret_size = 0;  // bytes of the shared secret
  // f_j(index) for chunk j; each below kShamirPrime.
  std::vector<uint64_t> values;
};

// `n` shares of `secret` (1..kMaxShamirSecretBytes bytes), any `threshold`
// of which reconstruct it: 1 <= threshold <= n <= kMaxShamirShares. Share i
// (0-based) has index i + 1. InvalidArgument for bad sizes; Internal when
// `random` fails.
absl::StatusOr<std::vector<Share>> Split(absl::Span<const uint8_t> secret,
                                         int threshold, int n,
                                         RandomSource& random);

// The secret from at least `threshold` shares, in any order.
// InvalidArgument: fewer shares than the threshold, a threshold below 1,
// index 0 or above kMaxShamirShares, a duplicate index, shares of different
// secret sizes or value counts, a value not below kShamirPrime. DataLoss:
// the shares beyond the first `threshold` disagree with them, or the result
// is not a secret Split could have shared (a chunk out of range): some
// share is corrupt or belongs to another secret.
absl::StatusOr<std::vector<uint8_t>> Reconstruct(absl::Span<const Share> shares,
                                                 int threshold);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_SHAMIR_H_
