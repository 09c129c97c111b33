#include "runtime/model.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fedberry::runtime {
namespace {

class LeNet5 : public Net {
 public:
  LeNet5()
      : conv1_(register_module(
            "conv1",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5).padding(2)))),
        conv2_(register_module("conv2", torch::nn::Conv2d(6, 16, 5))),
        fc1_(register_module("fc1", torch::nn::Linear(16 * 5 * 5, 120))),
        fc2_(register_module("fc2", torch::nn::Linear(120, 84))),
        fc3_(register_module("fc3", torch::nn::Linear(84, 10))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
    x = x.flatten(1);
    x = torch::relu(fc1_->forward(x));
    x = torch::relu(fc2_->forward(x));
    return fc3_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_, conv2_;
  torch::nn::Linear fc1_, fc2_, fc3_;
};

class Mlp : public Net {
 public:
  explicit Mlp(int64_t hidden)
      : fc1_(register_module("fc1", torch::nn::Linear(28 * 28, hidden))),
        fc2_(register_module("fc2", torch::nn::Linear(hidden, 10))) {}

  torch::Tensor forward(torch::Tensor x) override {
    return fc2_->forward(torch::relu(fc1_->forward(x.flatten(1))));
  }

 private:
  torch::nn::Linear fc1_, fc2_;
};

}  // namespace

std::vector<std::string> ModelNames() { return {"lenet5", "mlp", "wide-mlp"}; }

absl::StatusOr<std::shared_ptr<Net>> MakeNet(const std::string& name) {
  if (name == "lenet5") return std::make_shared<LeNet5>();
  if (name == "mlp") return std::make_shared<Mlp>(32);
  if (name == "wide-mlp") return std::make_shared<Mlp>(1536);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model '", name,
                   "' (known: ", absl::StrJoin(ModelNames(), ", "), ")"));
}

NamedTensors StateOf(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  NamedTensors out;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    out.push_back({item.key(), item.value().detach().clone().contiguous()});
  }
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    out.push_back({item.key(), item.value().detach().clone().contiguous()});
  }
  return out;
}

absl::Status LoadState(torch::nn::Module& module, const NamedTensors& state) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> targets;
  std::vector<std::string> names;
  for (const auto& item : module.named_parameters(true)) {
    names.push_back(item.key());
    targets.push_back(item.value());
  }
  for (const auto& item : module.named_buffers(true)) {
    names.push_back(item.key());
    targets.push_back(item.value());
  }
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
  }
  for (size_t i = 0; i < state.size(); ++i) targets[i].copy_(state[i].tensor);
  return absl::OkStatus();
}

NamedTensors CloneState(const NamedTensors& state) {
  NamedTensors out;
  out.reserve(state.size());
  for (const auto& t : state) out.push_back({t.name, t.tensor.clone()});
  return out;
}

}  // namespace fedberry::runtime
