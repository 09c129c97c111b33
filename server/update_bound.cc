#include "server/update_bound.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace fedberry::server {
namespace {

double SquaredNorm(const at::Tensor& t) {
  return t.to(at::kDouble).pow(2).sum().item<double>();
}

}  // namespace

UpdateBound::UpdateBound(std::shared_ptr<const runtime::NamedTensors> global,
                         double max_ratio)
    : global_(std::move(global)), max_ratio_(max_ratio) {
  at::NoGradGuard no_grad;
  double sum = 0;
  for (const auto& t : *global_) {
    if (t.tensor.is_floating_point()) sum += SquaredNorm(t.tensor);
  }
  scale_ = std::max(1.0, std::sqrt(sum));
}

absl::StatusOr<double> UpdateBound::Check(
    const runtime::NamedTensors& update) const {
  at::NoGradGuard no_grad;
  double sum = 0;
  for (size_t i = 0; i < update.size() && i < global_->size(); ++i) {
    if (!update[i].tensor.is_floating_point()) continue;
    sum += SquaredNorm(update[i].tensor.to(at::kDouble) -
                       (*global_)[i].tensor.to(at::kDouble));
  }
  const double ratio = std::sqrt(sum) / scale_;
  if (max_ratio_ > 0 && !(ratio <= max_ratio_)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "update moves the model %.4g x the global model's norm (%.4g); at "
        "most %g x is accepted (--max_update_ratio)",
        ratio, scale_, max_ratio_));
  }
  return ratio;
}

}  // namespace fedberry::server
