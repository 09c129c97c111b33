#include "runtime/model.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {

at::Tensor Model::OwnLoss(const at::Tensor&, const at::Tensor&) {
  throw std::logic_error("this model defines no loss of its own");
}

NamedTensors CopyState(const std::vector<std::string>& names,
                       const std::vector<at::Tensor>& tensors) {
  at::NoGradGuard no_grad;
  NamedTensors out;
  out.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    out.push_back({names[i], tensors[i].detach().clone().contiguous()});
  }
  return out;
}

absl::Status CopyInto(const std::vector<std::string>& names,
                      std::vector<at::Tensor>& targets,
                      const NamedTensors& state) {
  at::NoGradGuard no_grad;
  if (state.size() != targets.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model state has ", state.size(),
                     " tensors; the model has ", targets.size()));
  }
  for (size_t i = 0; i < state.size(); ++i) {
    if (state[i].name != names[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", i, " is named '", state[i].name,
                       "'; the model expects '", names[i], "'"));
    }
    if (!state[i].tensor.sizes().equals(targets[i].sizes())) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", names[i], "' has shape ",
                       c10::str(state[i].tensor.sizes()),
                       "; the model expects ", c10::str(targets[i].sizes())));
    }
    if (state[i].tensor.scalar_type() != targets[i].scalar_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", names[i], "' holds ",
          c10::toString(state[i].tensor.scalar_type()), "; the model expects ",
          c10::toString(targets[i].scalar_type())));
    }
  }
  for (size_t i = 0; i < state.size(); ++i) targets[i].copy_(state[i].tensor);
  return absl::OkStatus();
}

std::string DescribeTorchError(const std::exception& e) {
  std::string text;
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) {
    text = c10->what_without_backtrace();
  } else {
    text = e.what();
  }
  // A TorchScript traceback ends with the Python-style error line.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.find("Traceback of TorchScript") != std::string::npos) {
    const size_t nl = text.rfind('\n');
    if (nl != std::string::npos) text = text.substr(nl + 1);
  }
  return text;
}

NamedTensors CloneState(const NamedTensors& state) {
  NamedTensors out;
  out.reserve(state.size());
  for (const auto& t : state) out.push_back({t.name, t.tensor.clone()});
  return out;
}

}  // namespace fedberry::runtime
