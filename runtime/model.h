// The model seam: what training, evaluation and the wire need of a network,
// whatever built it (the model zoo, a TorchScript file). Model state moves
// as an ordered list of named tensors (parameters, then buffers), like a
// state_dict.
// Thread-safety: a Model is not safe for concurrent use; NamedTensors are
// plain values.
#ifndef FEDBERRY_RUNTIME_MODEL_H_
#define FEDBERRY_RUNTIME_MODEL_H_

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fedberry::runtime {

struct NamedTensor {
  std::string name;
  torch::Tensor tensor;
};
using NamedTensors = std::vector<NamedTensor>;

class Model {
 public:
  virtual ~Model() = default;
  // For logs and checkpoints: "lenet5", "torchscript:model.pt".
  virtual const std::string& name() const = 0;
  // Output for a batch [N, ...input shape].
  virtual torch::Tensor Forward(const torch::Tensor& x) = 0;
  // Trainable parameters, for the optimizer.
  virtual std::vector<torch::Tensor> Parameters() = 0;
  // Copies (detached, contiguous, on CPU) of parameters then buffers.
  virtual NamedTensors State() = 0;
  // Copies `state` into the parameters and buffers. InvalidArgument when
  // names, order or shapes do not match.
  virtual absl::Status LoadState(const NamedTensors& state) = 0;
  // Training or evaluation mode (dropout, batch norm).
  virtual void SetTraining(bool on) = 0;
  // The model's own loss(output, target), when it defines one.
  virtual bool HasOwnLoss() const { return false; }
  virtual torch::Tensor OwnLoss(const torch::Tensor& output,
                                const torch::Tensor& target);
};

// A Model over a torch::nn::Module whose forward takes one tensor.
template <typename Net>
class NnModel : public Model {
 public:
  NnModel(std::string name, std::shared_ptr<Net> net)
      : name_(std::move(name)), net_(std::move(net)) {}
  const std::string& name() const override { return name_; }
  torch::Tensor Forward(const torch::Tensor& x) override {
    return net_->forward(x);
  }
  std::vector<torch::Tensor> Parameters() override {
    return net_->parameters();
  }
  NamedTensors State() override;
  absl::Status LoadState(const NamedTensors& state) override;
  void SetTraining(bool on) override { net_->train(on); }

 private:
  std::string name_;
  std::shared_ptr<Net> net_;
};

// Copies of `tensors` under `names`.
NamedTensors CopyState(const std::vector<std::string>& names,
                       const std::vector<torch::Tensor>& tensors);
// Copies `state` into `targets`, checking names, count and shapes.
absl::Status CopyInto(const std::vector<std::string>& names,
                      std::vector<torch::Tensor>& targets,
                      const NamedTensors& state);
// The parameters then buffers of a module, with their names.
void ModuleTensors(torch::nn::Module& module, std::vector<std::string>* names,
                   std::vector<torch::Tensor>* tensors);

template <typename Net>
NamedTensors NnModel<Net>::State() {
  std::vector<std::string> names;
  std::vector<torch::Tensor> tensors;
  ModuleTensors(*net_, &names, &tensors);
  return CopyState(names, tensors);
}

template <typename Net>
absl::Status NnModel<Net>::LoadState(const NamedTensors& state) {
  std::vector<std::string> names;
  std::vector<torch::Tensor> tensors;
  ModuleTensors(*net_, &names, &tensors);
  return CopyInto(names, tensors, state);
}

// Deep copy.
NamedTensors CloneState(const NamedTensors& state);

// What a LibTorch or TorchScript exception says, without the C++ backtrace
// or the TorchScript traceback: for an error inside a scripted forward, its
// last line (e.g. "RuntimeError: mat1 and mat2 shapes cannot be
// multiplied (4x8 and 5x32)").
std::string DescribeTorchError(const std::exception& e);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_MODEL_H_
