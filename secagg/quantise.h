// Real-valued updates into the integers mod 2^bits that secure aggregation
// masks and sums, and the sum back. The masked sum is computed mod 2^bits,
// so the quantised values must leave room for it: with at most N summands,
// each value is a level in [0, M] with M = floor((2^bits - 1) / N), and any
// sum of N of them is at most N * M < 2^bits: it never wraps, and the
// unmasked sum is the true integer sum.
//
// A value x is clipped to [-C, C] and mapped to (x + C) / step, step =
// 2C / M, then rounded to a level: to the nearest (deterministic; error at
// most step / 2 = C / M per value), or stochastically, up with probability
// the fraction (unbiased; error below step = 2C / M). M is about 2^bits / N,
// so the error per value is about C * N / 2^bits (deterministic) and twice
// that (stochastic); a sum of k values is off by at most k times that.
// Clipping's own error, |x| - C for |x| > C, comes on top.
//
// Thread-safety: const after construction; Quantise with a RandomSource is
// as thread-safe as the source.
#ifndef FEDBERRY_SECAGG_QUANTISE_H_
#define FEDBERRY_SECAGG_QUANTISE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/random_source.h"

namespace fedberry::secagg {

class Quantiser {
 public:
  // Values clipped to [-clip, clip] (finite, > 0), in a field of 2^bits
  // (1..32) that holds sums of up to max_summands (>= 1) values.
  // InvalidArgument for a bound that is not finite and positive, bits
  // outside 1..32, no summands, or a field too small for them: M =
  // floor((2^bits - 1) / max_summands) must be at least 1.
  static absl::StatusOr<Quantiser> Create(double clip, int bits,
                                          uint32_t max_summands);

  // Levels in [0, levels()], one per value, rounded to the nearest, or
  // stochastically when `random` is given (four bytes per value).
  // InvalidArgument for a value that is NaN (infinities are clipped);
  // Internal when `random` fails.
  absl::StatusOr<std::vector<uint32_t>> Quantise(
      absl::Span<const float> values, RandomSource* random = nullptr) const;

  // The real sum of `summands` (1..max_summands) quantised vectors from
  // their integer sum: sum * step - summands * clip. InvalidArgument for a
  // count out of range or a sum above summands * levels(), which no
  // `summands` quantised values make (the sum wrapped, was unmasked wrong,
  // or the count is wrong).
  absl::StatusOr<std::vector<double>> Dequantise(absl::Span<const uint32_t> sum,
                                                 uint32_t summands) const;

  double clip() const { return clip_; }
  int bits() const { return bits_; }
  uint32_t max_summands() const { return max_summands_; }
  // M: the highest level of one value.
  uint32_t levels() const { return levels_; }
  // 2C / M: the real value of one level.
  double step() const { return step_; }

 private:
  Quantiser(double clip, int bits, uint32_t max_summands, uint32_t levels)
      : clip_(clip),
        bits_(bits),
        max_summands_(max_summands),
        levels_(levels),
        step_(2 * clip / levels) {}

  double clip_;
  int bits_;
  uint32_t max_summands_;
  uint32_t levels_;
  double step_;
};

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_QUANTISE_H_
