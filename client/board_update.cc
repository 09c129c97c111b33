#include "client/board_update.h"

#include <ATen/core/Tensor.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/update_clip.h"

namespace fedberry::client {

absl::Status PrivatizeUpdate(const v1::TrainConfig& config,
                             const runtime::NamedTensors& global,
                             uint64_t noise_seed, TrainOutcome& out) {
  if (config.dp_clip() <= 0) return absl::OkStatus();
  FEDBERRY_ASSIGN_OR_RETURN(
      const double norm,
      runtime::ClipUpdate(out.model, global, config.dp_clip()));
  out.metrics.set_update_clipped(norm > config.dp_clip());
  const double z = config.dp_local_noise_multiplier();
  if (z <= 0) return absl::OkStatus();
  return runtime::AddUpdateNoise(out.model, z * config.dp_clip(), noise_seed);
}

bool FitsFloatingTensors(const runtime::NamedTensors& tensors,
                         const runtime::NamedTensors& model) {
  size_t k = 0;
  for (const auto& t : model) {
    if (!t.tensor.is_floating_point()) continue;
    if (k >= tensors.size() || tensors[k].name != t.name ||
        !tensors[k].tensor.sizes().equals(t.tensor.sizes())) {
      return false;
    }
    ++k;
  }
  return k == tensors.size();
}

absl::StatusOr<std::vector<runtime::EncodedTensor>> EncodeUpdate(
    const v1::TrainingPlan& plan, const runtime::NamedTensors& model,
    const runtime::NamedTensors& global,
    const runtime::NamedTensors& residual_in,
    runtime::NamedTensors* residual_next) {
  const v1::Encoding encoding = plan.update_encoding();
  if (encoding == v1::ENCODING_RAW || encoding == v1::ENCODING_UNSPECIFIED) {
    return std::vector<runtime::EncodedTensor>{};
  }
  if (model.size() != global.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trained model has ", model.size(),
                     " tensors; the global model ", global.size()));
  }
  const bool topk = encoding == v1::ENCODING_TOPK;
  std::vector<runtime::EncodedTensor> out;
  size_t k = 0;  // into residual_in
  for (size_t i = 0; i < model.size(); ++i) {
    at::Tensor residual;
    if (topk && model[i].tensor.is_floating_point() && k < residual_in.size()) {
      residual = residual_in[k++].tensor.clone();
    }
    FEDBERRY_ASSIGN_OR_RETURN(
        runtime::EncodedTensor e,
        runtime::EncodeTensor(model[i].name, model[i].tensor, encoding,
                              &global[i].tensor, plan.topk_fraction(),
                              topk ? &residual : nullptr));
    if (topk && model[i].tensor.is_floating_point()) {
      residual_next->push_back({model[i].name, residual});
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace fedberry::client
