#include "secagg/update_words.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "secagg/mask.h"

namespace fedberry::secagg {
namespace {

bool Travels(const at::Tensor& t) { return at::isFloatingType(t.scalar_type()); }

uint64_t FloatingValues(const runtime::NamedTensors& model) {
  uint64_t n = 0;
  for (const runtime::NamedTensor& t : model) {
    if (Travels(t.tensor)) n += static_cast<uint64_t>(t.tensor.numel());
  }
  return n;
}

}  // namespace

absl::StatusOr<UpdateWords> UpdateWords::Create(
    const runtime::NamedTensors& global, double clip, int bits,
    uint32_t cohort) {
  const uint64_t values = FloatingValues(global);
  if (values == 0 || values >= kMaxMaskWords) {
    return absl::InvalidArgumentError(absl::StrCat(
        "secure aggregation needs a model with 1 to ", kMaxMaskWords - 1,
        " floating values; this one has ", values));
  }
  FEDBERRY_ASSIGN_OR_RETURN(Quantiser changes,
                            Quantiser::Create(clip, bits, cohort));
  FEDBERRY_ASSIGN_OR_RETURN(Quantiser weights,
                            Quantiser::Create(1.0, bits, cohort));
  return UpdateWords(values, std::move(changes), std::move(weights));
}

absl::Status UpdateWords::CheckLayout(const runtime::NamedTensors& model) const {
  if (FloatingValues(model) != values_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the update has ", FloatingValues(model),
        " floating values; the session's model has ", values_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> UpdateWords::Encode(
    const runtime::NamedTensors& trained, const runtime::NamedTensors& global,
    double weight) const {
  FEDBERRY_RETURN_IF_ERROR(CheckLayout(trained));
  FEDBERRY_RETURN_IF_ERROR(CheckLayout(global));
  if (trained.size() != global.size()) {
    return absl::InvalidArgumentError("the update and the global model differ "
                                      "in tensor count");
  }
  if (!(weight > 0 && weight <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a board's weight must be in (0, 1], not ", weight));
  }
  std::vector<float> values;
  values.reserve(values_);
  for (size_t i = 0; i < trained.size(); ++i) {
    if (!Travels(global[i].tensor)) continue;
    at::Tensor change = (trained[i].tensor.to(at::kFloat) -
                         global[i].tensor.to(at::kFloat))
                            .clamp(-changes_.clip(), changes_.clip())
                            .mul(weight)
                            .contiguous();
    const float* p = change.data_ptr<float>();
    values.insert(values.end(), p, p + change.numel());
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<uint32_t> words,
                            changes_.Quantise(values));
  const float w = static_cast<float>(weight);
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<uint32_t> weight_word,
                            weights_.Quantise(absl::MakeConstSpan(&w, 1)));
  words.push_back(weight_word[0]);
  return words;
}

absl::StatusOr<UnmaskedMean> UpdateWords::Decode(
    absl::Span<const uint32_t> sum, uint32_t summands,
    const runtime::NamedTensors& global) const {
  FEDBERRY_RETURN_IF_ERROR(CheckLayout(global));
  if (sum.size() != vector_length()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the unmasked sum has ", sum.size(), " words; expected ",
        vector_length()));
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<double> changes,
                            changes_.Dequantise(sum.first(values_), summands));
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<double> weight,
                            weights_.Dequantise(sum.last(1), summands));
  // Each weight is at least one quantisation step above 0 only when the
  // boards weighed honestly; a sum at or below a step's worth is noise.
  if (!(weight[0] > weights_.step() * summands)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the boards' weights sum to ", weight[0], ": no mean to take"));
  }
  UnmaskedMean mean;
  mean.weight_sum = weight[0];
  size_t offset = 0;
  for (const runtime::NamedTensor& t : global) {
    if (!Travels(t.tensor)) {
      mean.model.push_back({t.name, t.tensor.clone()});
      continue;
    }
    const int64_t n = t.tensor.numel();
    at::Tensor change = at::empty({n}, at::kDouble);
    std::copy(changes.begin() + offset, changes.begin() + offset + n,
              change.data_ptr<double>());
    offset += n;
    at::Tensor moved = t.tensor.to(at::kDouble) +
                       change.div(weight[0]).view(t.tensor.sizes());
    mean.model.push_back({t.name, moved.to(t.tensor.scalar_type())});
  }
  return mean;
}

}  // namespace fedberry::secagg
