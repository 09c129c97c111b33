#include "server/strategy/fedavg.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/strategy/update_layout.h"

namespace fedberry::server {

FedAvg::FedAvg(const runtime::NamedTensors& reference) : reference_(reference) {
  for (const auto& t : reference) {
    sum_.push_back({t.name, at::zeros(t.tensor.sizes(), at::kDouble)});
    dtypes_.push_back(t.tensor.scalar_type());
  }
}

absl::Status FedAvg::Validate(const runtime::NamedTensors& update) const {
  return CheckUpdateLayout(reference_, update);
}

namespace {

// sum += weight * update, in float64. The common case (float32 updates, the
// bulk of every model) is one pass with no temporary: `update.to(kDouble)`
// made a double copy of each tensor per update.
void AccumulateInto(at::Tensor& sum, const at::Tensor& update, double weight) {
  if (update.scalar_type() == at::kFloat && update.is_contiguous() &&
      sum.scalar_type() == at::kDouble && sum.is_contiguous() &&
      sum.numel() == update.numel()) {
    double* s = sum.data_ptr<double>();
    const float* u = update.data_ptr<float>();
    const int64_t n = update.numel();
    for (int64_t j = 0; j < n; ++j) s[j] += weight * static_cast<double>(u[j]);
    return;
  }
  sum.add_(update.to(at::kDouble), weight);
}

}  // namespace

absl::Status FedAvg::Add(const runtime::NamedTensors& update, double weight) {
  if (absl::Status s = Validate(update); !s.ok()) return s;
  return AddValidated(update, weight);
}

absl::Status FedAvg::AddValidated(const runtime::NamedTensors& update,
                                  double weight) {
  if (!(weight > 0) || !std::isfinite(weight)) {
    return absl::InvalidArgumentError(
        absl::StrCat("update weight must be a positive number, got ", weight));
  }
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < update.size(); ++i) {
    AccumulateInto(sum_[i].tensor, update[i].tensor, weight);
  }
  ++updates_;
  total_weight_ += weight;
  return absl::OkStatus();
}

absl::StatusOr<runtime::NamedTensors> FedAvg::Result() const {
  if (updates_ == 0) {
    return absl::FailedPreconditionError("no update was aggregated");
  }
  runtime::NamedTensors out;
  for (size_t i = 0; i < sum_.size(); ++i) {
    at::Tensor mean = sum_[i].tensor / total_weight_;
    if (!c10::isFloatingType(dtypes_[i])) mean = mean.round();
    out.push_back({sum_[i].name, mean.to(dtypes_[i]).contiguous()});
  }
  return out;
}

}  // namespace fedberry::server
