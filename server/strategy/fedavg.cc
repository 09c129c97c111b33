#include "server/fedavg.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/tensor_codec.h"

namespace fedberry::server {

FedAvg::FedAvg(const runtime::NamedTensors& reference) {
  for (const auto& t : reference) {
    sum_.push_back({t.name, torch::zeros(t.tensor.sizes(), torch::kFloat64)});
    dtypes_.push_back(t.tensor.scalar_type());
  }
}

absl::Status FedAvg::Validate(const runtime::NamedTensors& update) const {
  if (update.size() != sum_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update has ", update.size(), " tensors; the model has ", sum_.size()));
  }
  for (size_t i = 0; i < update.size(); ++i) {
    const auto& got = update[i];
    const auto& want = sum_[i];
    if (got.name != want.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("update tensor ", i, " is named '", got.name,
                       "'; the model has '", want.name, "'"));
    }
    if (!got.tensor.sizes().equals(want.tensor.sizes())) {
      return absl::InvalidArgumentError(
          absl::StrCat("update tensor '", got.name, "' has shape ",
                       c10::str(got.tensor.sizes()), "; the model has ",
                       c10::str(want.tensor.sizes())));
    }
    if (got.tensor.scalar_type() != dtypes_[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("update tensor '", got.name, "' has dtype ",
                       c10::toString(got.tensor.scalar_type()),
                       "; the model has ", c10::toString(dtypes_[i])));
    }
  }
  return runtime::CheckFinite(update);
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
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < update.size(); ++i) {
    sum_[i].tensor.add_(update[i].tensor.to(torch::kFloat64), weight);
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
    torch::Tensor mean = sum_[i].tensor / total_weight_;
    if (!c10::isFloatingType(dtypes_[i])) mean = mean.round();
    out.push_back({sum_[i].name, mean.to(dtypes_[i]).contiguous()});
  }
  return out;
}

}  // namespace fedberry::server
