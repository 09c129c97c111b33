// A board's update as the words a SecAgg+ session masks, and the unmasked
// sum back as a model. The words are the model's floating values' changes
// from the round's global model, each clipped to [-clip, clip] and
// multiplied by the board's weight w in (0, 1] (its samples over the
// session's weight cap), then w itself: the weights travel inside the
// masked vector, so the gateway learns only their sum too. Each part is
// quantised for `cohort` summands (quantise.h), the weight with a clip of 1.
// Integer tensors (counters) do not travel: the mean keeps the global's.
//
// Under differential privacy (`count_clipped`) each board has clipped its
// change to the round's L2 bound and weighs 1; a last word, 0 or 1, says
// whether its change reached the bound, so the gateway learns only how many
// did (adaptive clipping's count) and the sum itself, to which it adds the
// noise (DecodeSum).
//
// Thread-safety: const after construction.
#ifndef FEDBERRY_SECAGG_UPDATE_WORDS_H_
#define FEDBERRY_SECAGG_UPDATE_WORDS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/model.h"
#include "secagg/quantise.h"

namespace fedberry::secagg {

// The weighted mean a session's sum makes, and the weights' sum.
struct UnmaskedMean {
  runtime::NamedTensors model;  // global + sum(w * clipped change) / sum(w)
  double weight_sum = 0;
};

// The unmasked sum itself, for a gateway that adds noise to it.
struct UnmaskedSum {
  runtime::NamedTensors total;  // global + sum(clipped change), unweighted
  double weight_sum = 0;
  int clipped = 0;  // boards whose change reached the bound (count_clipped)
};

class UpdateWords {
 public:
  // For updates of models shaped like `global`. InvalidArgument for a
  // model without floating values or one over kMaxMaskWords - 1 of them;
  // the Quantiser's errors for clip, bits and cohort.
  static absl::StatusOr<UpdateWords> Create(const runtime::NamedTensors& global,
                                            double clip, int bits,
                                            uint32_t cohort,
                                            bool count_clipped = false);

  // The floating values, plus the weight word (and the clipped word).
  uint64_t vector_length() const { return values_ + 1 + count_clipped_; }
  bool count_clipped() const { return count_clipped_; }
  double clip() const { return changes_.clip(); }

  // `trained`'s words, from `global`, weighed by `weight` (in (0, 1]);
  // `clipped`: whether the board's clip to the L2 bound shortened it (sent
  // only when count_clipped). InvalidArgument for models of another layout
  // than Create's, a weight out of range, or a value that is NaN.
  absl::StatusOr<std::vector<uint32_t>> Encode(
      const runtime::NamedTensors& trained, const runtime::NamedTensors& global,
      double weight, bool clipped = false) const;

  // The mean of `summands` boards' words from their unmasked `sum`.
  // InvalidArgument for a sum of the wrong length, one no `summands` boards
  // make (Dequantise), or weights that sum to nothing.
  absl::StatusOr<UnmaskedMean> Decode(
      absl::Span<const uint32_t> sum, uint32_t summands,
      const runtime::NamedTensors& global) const;

  // The sum of `summands` boards' words (count_clipped only: each weighed
  // 1). InvalidArgument as Decode's, for weights that do not sum to
  // `summands` (a board that weighed otherwise), or a clipped count out of
  // 0..summands.
  absl::StatusOr<UnmaskedSum> DecodeSum(
      absl::Span<const uint32_t> sum, uint32_t summands,
      const runtime::NamedTensors& global) const;

 private:
  UpdateWords(uint64_t values, Quantiser changes, Quantiser weights,
              bool count_clipped)
      : values_(values),
        count_clipped_(count_clipped),
        changes_(std::move(changes)),
        weights_(std::move(weights)) {}
  absl::Status CheckLayout(const runtime::NamedTensors& model) const;
  // The summed changes and the extra words' sums (weight, then clipped).
  struct Sums {
    std::vector<double> changes;
    std::vector<double> extra;
  };
  absl::StatusOr<Sums> Dequantise(absl::Span<const uint32_t> sum,
                                  uint32_t summands,
                                  const runtime::NamedTensors& global) const;
  // `global` moved by the summed `changes` over `divisor`.
  static runtime::NamedTensors Moved(const runtime::NamedTensors& global,
                                     const std::vector<double>& changes,
                                     double divisor);

  uint64_t values_;
  bool count_clipped_;
  Quantiser changes_;
  Quantiser weights_;
};

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_UPDATE_WORDS_H_
