#include "runtime/update_clip.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {

absl::StatusOr<double> UpdateNorm(const NamedTensors& model,
                                  const NamedTensors& reference) {
  if (model.size() != reference.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the update has ", model.size(),
        " tensors; the model it is measured from ", reference.size()));
  }
  double squares = 0;
  for (size_t i = 0; i < model.size(); ++i) {
    const at::Tensor& t = model[i].tensor;
    const at::Tensor& r = reference[i].tensor;
    if (model[i].name != reference[i].name || !t.sizes().equals(r.sizes()) ||
        t.scalar_type() != r.scalar_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("update tensor ", i, " (", model[i].name,
                       ") does not fit the model's (", reference[i].name, ")"));
    }
    if (!t.is_floating_point()) continue;
    squares += (t.to(torch::kFloat64) - r.to(torch::kFloat64))
                   .square()
                   .sum()
                   .item<double>();
  }
  return std::sqrt(squares);
}

absl::StatusOr<double> ClipUpdate(NamedTensors& model,
                                  const NamedTensors& reference, double clip) {
  if (!(clip > 0) || !std::isfinite(clip)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the clip bound must be positive and finite; got ", clip));
  }
  absl::StatusOr<double> norm = UpdateNorm(model, reference);
  if (!norm.ok() || *norm <= clip) return norm;
  const double scale = clip / *norm;
  for (size_t i = 0; i < model.size(); ++i) {
    at::Tensor& t = model[i].tensor;
    if (!t.is_floating_point()) continue;
    const at::Tensor& r = reference[i].tensor;
    t = (r.to(torch::kFloat64) +
         (t.to(torch::kFloat64) - r.to(torch::kFloat64)) * scale)
            .to(t.scalar_type());
  }
  return norm;
}

absl::Status AddUpdateNoise(NamedTensors& model, double stddev, uint64_t seed) {
  if (!(stddev >= 0) || !std::isfinite(stddev)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the noise's standard deviation must be >= 0 and finite; got ",
        stddev));
  }
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& t : model) {
    if (!t.tensor.is_floating_point()) continue;
    const at::Tensor noise =
        at::normal(0.0, stddev, t.tensor.sizes(), generator,
                   torch::dtype(torch::kFloat64));
    t.tensor =
        (t.tensor.to(torch::kFloat64) + noise).to(t.tensor.scalar_type());
  }
  return absl::OkStatus();
}

}  // namespace fedberry::runtime
