#include "server/strategy/stored_round.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fedberry::server {

StoredRound::StoredRound(std::shared_ptr<const runtime::NamedTensors> global,
                         std::unique_ptr<UpdateStore> store)
    : global_(std::move(global)), store_(std::move(store)) {
  for (const auto& t : *global_) {
    if (!t.tensor.is_floating_point()) integers_.push_back(t);
  }
  integer_mean_ = std::make_unique<FedAvg>(integers_);
}

absl::Status StoredRound::Add(const runtime::NamedTensors& update,
                              double weight) {
  if (!(weight > 0) || !std::isfinite(weight)) {
    return absl::InvalidArgumentError(
        absl::StrCat("update weight must be a positive number, got ", weight));
  }
  runtime::NamedTensors integers;
  for (const auto& t : update) {
    if (!t.tensor.is_floating_point()) integers.push_back(t);
  }
  if (absl::Status s = store_->Append(update); !s.ok()) return s;
  if (!integers_.empty()) {
    if (absl::Status s = integer_mean_->AddValidated(integers, weight);
        !s.ok()) {
      return s;
    }
  }
  weights_.push_back(weight);
  return absl::OkStatus();
}

absl::StatusOr<runtime::NamedTensors> StoredRound::Assemble(
    const std::vector<float>& floating) const {
  runtime::NamedTensors integers;
  if (!integers_.empty()) {
    absl::StatusOr<runtime::NamedTensors> mean = integer_mean_->Result();
    if (!mean.ok()) return mean.status();
    integers = *std::move(mean);
  }
  runtime::NamedTensors out = store_->Unflatten(floating);
  size_t next_integer = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const at::ScalarType dtype = (*global_)[i].tensor.scalar_type();
    if (!out[i].tensor.defined()) {
      out[i].tensor = integers[next_integer++].tensor;
    } else {
      out[i].tensor = out[i].tensor.to(dtype).contiguous();
    }
  }
  return out;
}

}  // namespace fedberry::server
