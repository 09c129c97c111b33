// The masks of secure aggregation: a 256-bit seed (a pair's agreed mask
// seed, or a board's own self-mask seed) expanded into as many words as the
// quantised update has, each taken mod 2^bits. Both boards of a pair expand
// the same seed; one adds the mask and the other subtracts it, so the pair's
// masks cancel in the sum, and the server removes the survivors' self masks
// once it has reconstructed their seeds.
//
// The stream is ChaCha20 (RFC 8439, OpenSSL's EVP_chacha20) with the whole
// seed as key, a zero 96-bit nonce and the block counter starting at zero:
// each seed expands into one mask only, so no nonce is needed to keep
// streams apart, and a fixed one makes the mask a function of the seed
// alone, which the board that adds it and the server that removes it must
// agree on. Word i is keystream bytes 4i..4i+3 read little-endian on every
// host, then its top 32 - bits bits are cleared.
//
// Thread-safety: functions without shared state.
#ifndef FEDBERRY_SECAGG_MASK_H_
#define FEDBERRY_SECAGG_MASK_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/key_agreement.h"

namespace fedberry::secagg {

// At most 2^32 words (16 GiB) per mask: far beyond any model, and within
// ChaCha20's 32-bit block counter (2^36 words).
inline constexpr uint64_t kMaxMaskWords = uint64_t{1} << 32;

// `count` words of the seed's mask, each below 2^bits. InvalidArgument for
// bits outside 1..32 or count above kMaxMaskWords; Internal when OpenSSL
// fails.
absl::StatusOr<std::vector<uint32_t>> ExpandMask(const Key256& seed,
                                                 uint64_t count, int bits);

enum class MaskSign { kAdd, kSubtract };

// values[i] = (values[i] +/- mask[i]) mod 2^bits for the seed's mask; every
// value must be below 2^bits already. InvalidArgument for bits outside 1..32
// or a value out of range (then `values` is unchanged); Internal when
// OpenSSL fails.
absl::Status ApplyMask(absl::Span<uint32_t> values, const Key256& seed,
                       int bits, MaskSign sign);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_MASK_H_
