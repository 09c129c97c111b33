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
    sum_[i].tensor.add_(update[i].tensor.to(at::kDouble), weight);
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
