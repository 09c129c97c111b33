#include "secagg/quantise.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace fedberry::secagg {

absl::StatusOr<Quantiser> Quantiser::Create(double clip, int bits,
                                            uint32_t max_summands) {
  if (!std::isfinite(clip) || !(clip > 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "quantisation clip bound %g; it must be finite and positive", clip));
  }
  if (bits < 1 || bits > 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "quantisation field of 2^%d; 1..32 bits are possible", bits));
  }
  if (max_summands < 1) {
    return absl::InvalidArgumentError(
        "quantisation for sums of 0 values; at least 1 is needed");
  }
  const uint64_t top = (uint64_t{1} << bits) - 1;
  const uint64_t levels = top / max_summands;
  if (levels < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a field of 2^%d cannot hold sums of %d values without wrapping: "
        "each needs at least two levels (0 and 1), so at least %d bits",
        bits, max_summands,
        static_cast<int>(std::ceil(std::log2(max_summands + 1.0)))));
  }
  return Quantiser(clip, bits, max_summands, static_cast<uint32_t>(levels));
}

absl::StatusOr<std::vector<uint32_t>> Quantiser::Quantise(
    absl::Span<const float> values, RandomSource* random) const {
  std::vector<uint8_t> noise;
  if (random != nullptr) {
    noise.resize(values.size() * 4);
    if (absl::Status s = random->Fill(absl::MakeSpan(noise)); !s.ok()) {
      return s;
    }
  }
  std::vector<uint32_t> out(values.size());
  const double top = levels_;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("value %d to quantise is NaN", i));
    }
    const double x = std::clamp<double>(values[i], -clip_, clip_);
    // In [0, M]; clamped again so rounding error at the ends stays inside.
    const double scaled = std::clamp((x + clip_) / step_, 0.0, top);
    double level;
    if (random == nullptr) {
      level = std::nearbyint(scaled);
    } else {
      const uint8_t* b = noise.data() + 4 * i;
      const uint32_t r = uint32_t{b[0]} | uint32_t{b[1]} << 8 |
                         uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
      const double u = r / 4294967296.0;  // uniform in [0, 1)
      const double floor = std::floor(scaled);
      level = floor + (u < scaled - floor ? 1 : 0);
    }
    out[i] = static_cast<uint32_t>(std::min(level, top));
  }
  return out;
}

absl::StatusOr<std::vector<double>> Quantiser::Dequantise(
    absl::Span<const uint32_t> sum, uint32_t summands) const {
  if (summands < 1 || summands > max_summands_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a sum of %d quantised values; this quantiser's field holds 1..%d",
        summands, max_summands_));
  }
  const uint64_t highest = uint64_t{summands} * levels_;
  std::vector<double> out(sum.size());
  for (size_t i = 0; i < sum.size(); ++i) {
    if (sum[i] > highest) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "quantised sum %d at %d is above %d, the most %d values of at most "
          "%d can add to: it wrapped, was unmasked wrongly, or the count is "
          "wrong",
          sum[i], i, highest, summands, levels_));
    }
    out[i] = sum[i] * step_ - summands * clip_;
  }
  return out;
}

}  // namespace fedberry::secagg
