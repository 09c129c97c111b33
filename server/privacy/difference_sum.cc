#include "server/privacy/difference_sum.h"

#include <torch/torch.h>

#include <utility>

#include "runtime/update_clip.h"

namespace fedberry::server {

DifferenceSum::DifferenceSum(
    std::shared_ptr<const runtime::NamedTensors> global)
    : global_(std::move(global)) {
  for (const auto& t : *global_) {
    sum_.push_back(t.tensor.is_floating_point()
                       ? torch::zeros(t.tensor.sizes(), torch::kFloat64)
                       : at::Tensor());
  }
}

absl::StatusOr<double> DifferenceSum::Norm(
    const runtime::NamedTensors& update) const {
  return runtime::UpdateNorm(update, *global_);
}

void DifferenceSum::Add(const runtime::NamedTensors& update, double scale) {
  for (size_t i = 0; i < update.size() && i < sum_.size(); ++i) {
    if (!sum_[i].defined()) continue;
    sum_[i] += (update[i].tensor.to(torch::kFloat64) -
                (*global_)[i].tensor.to(torch::kFloat64)) *
               scale;
  }
}

void DifferenceSum::AddNoise(double stddev, at::Generator& generator) {
  for (at::Tensor& s : sum_) {
    if (!s.defined()) continue;
    s += at::normal(0.0, stddev, s.sizes(), generator,
                    torch::dtype(torch::kFloat64));
  }
}

runtime::NamedTensors DifferenceSum::Over(double divisor) const {
  runtime::NamedTensors next;
  for (size_t i = 0; i < global_->size(); ++i) {
    const at::Tensor& g = (*global_)[i].tensor;
    next.push_back(
        {(*global_)[i].name,
         sum_[i].defined()
             ? (g.to(torch::kFloat64) + sum_[i] / divisor).to(g.scalar_type())
             : g.clone()});
  }
  return next;
}

}  // namespace fedberry::server
