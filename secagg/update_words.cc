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

bool Travels(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type());
}

uint64_t FloatingValues(const runtime::NamedTensors& model) {
  uint64_t n = 0;
  for (const runtime::NamedTensor& t : model) {
    if (Travels(t.tensor)) n += static_cast<uint64_t>(t.tensor.numel());
  }
  return n;
}

}  // namespace

absl::StatusOr<UpdateWords> UpdateWords::Create(
    const runtime::NamedTensors& global, double clip, int bits, uint32_t cohort,
    bool count_clipped) {
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
  return UpdateWords(values, std::move(changes), std::move(weights),
                     count_clipped);
}

absl::Status UpdateWords::CheckLayout(
    const runtime::NamedTensors& model) const {
  if (FloatingValues(model) != values_) {
    return absl::InvalidArgumentError(
        absl::StrCat("the update has ", FloatingValues(model),
                     " floating values; the session's model has ", values_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> UpdateWords::Encode(
    const runtime::NamedTensors& trained, const runtime::NamedTensors& global,
    double weight, bool clipped) const {
  FEDBERRY_RETURN_IF_ERROR(CheckLayout(trained));
  FEDBERRY_RETURN_IF_ERROR(CheckLayout(global));
  if (trained.size() != global.size()) {
    return absl::InvalidArgumentError(
        "the update and the global model differ "
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
    at::Tensor change =
        (trained[i].tensor.to(at::kFloat) - global[i].tensor.to(at::kFloat))
            .clamp(-changes_.clip(), changes_.clip())
            .mul(weight)
            .contiguous();
    const float* p = change.data_ptr<float>();
    values.insert(values.end(), p, p + change.numel());
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<uint32_t> words,
                            changes_.Quantise(values));
  std::vector<float> extra = {static_cast<float>(weight)};
  if (count_clipped_) extra.push_back(clipped ? 1.0f : 0.0f);
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<uint32_t> extra_words,
                            weights_.Quantise(extra));
  words.insert(words.end(), extra_words.begin(), extra_words.end());
  return words;
}

absl::StatusOr<UpdateWords::Sums> UpdateWords::Dequantise(
    absl::Span<const uint32_t> sum, uint32_t summands,
    const runtime::NamedTensors& global) const {
  FEDBERRY_RETURN_IF_ERROR(CheckLayout(global));
  if (sum.size() != vector_length()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the unmasked sum has ", sum.size(), " words; expected ",
                     vector_length()));
  }
  Sums sums;
  FEDBERRY_ASSIGN_OR_RETURN(sums.changes,
                            changes_.Dequantise(sum.first(values_), summands));
  FEDBERRY_ASSIGN_OR_RETURN(
      sums.extra, weights_.Dequantise(sum.subspan(values_), summands));
  return sums;
}

runtime::NamedTensors UpdateWords::Moved(const runtime::NamedTensors& global,
                                         const std::vector<double>& changes,
                                         double divisor) {
  runtime::NamedTensors model;
  size_t offset = 0;
  for (const runtime::NamedTensor& t : global) {
    if (!Travels(t.tensor)) {
      model.push_back({t.name, t.tensor.clone()});
      continue;
    }
    const int64_t n = t.tensor.numel();
    at::Tensor change = at::empty({n}, at::kDouble);
    std::copy(changes.begin() + offset, changes.begin() + offset + n,
              change.data_ptr<double>());
    offset += n;
    at::Tensor moved =
        t.tensor.to(at::kDouble) + change.div(divisor).view(t.tensor.sizes());
    model.push_back({t.name, moved.to(t.tensor.scalar_type())});
  }
  return model;
}

absl::StatusOr<UnmaskedMean> UpdateWords::Decode(
    absl::Span<const uint32_t> sum, uint32_t summands,
    const runtime::NamedTensors& global) const {
  FEDBERRY_ASSIGN_OR_RETURN(Sums sums, Dequantise(sum, summands, global));
  const double weight = sums.extra[0];
  // Each weight is at least one quantisation step above 0 only when the
  // boards weighed honestly; a sum at or below a step's worth is noise.
  if (!(weight > weights_.step() * summands)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the boards' weights sum to ", weight, ": no mean to take"));
  }
  UnmaskedMean mean;
  mean.weight_sum = weight;
  mean.model = Moved(global, sums.changes, weight);
  return mean;
}

absl::StatusOr<UnmaskedSum> UpdateWords::DecodeSum(
    absl::Span<const uint32_t> sum, uint32_t summands,
    const runtime::NamedTensors& global) const {
  if (!count_clipped_) {
    return absl::FailedPreconditionError(
        "the boards weighed their updates: only their mean is meaningful");
  }
  FEDBERRY_ASSIGN_OR_RETURN(Sums sums, Dequantise(sum, summands, global));
  // Quantisation moves each word by under a step; a board that weighed
  // other than 1, or sent a clipped word other than 0 or 1, moves it more.
  const double slack = 0.5;
  UnmaskedSum out;
  out.weight_sum = sums.extra[0];
  if (std::abs(out.weight_sum - summands) > slack) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the boards' weights sum to ", out.weight_sum, ", not the ", summands,
        " counted: under differential privacy each board weighs 1"));
  }
  const double clipped = std::round(sums.extra[1]);
  if (std::abs(sums.extra[1] - clipped) > slack / 2 || clipped < 0 ||
      clipped > summands) {
    return absl::InvalidArgumentError(
        absl::StrCat("the boards' clipped words sum to ", sums.extra[1],
                     ", not a count of 0..", summands));
  }
  out.clipped = static_cast<int>(clipped);
  out.total = Moved(global, sums.changes, 1.0);
  return out;
}

}  // namespace fedberry::secagg
