// The model seam: what training, evaluation and the wire need of a network,
// whatever built it (the model zoo, a TorchScript file). Model state moves
// as an ordered list of named tensors (parameters, then buffers), like a
// state_dict.
// Thread-safety: a Model is not safe for concurrent use; NamedTensors are
// plain values.
#ifndef FEDBERRY_RUNTIME_MODEL_H_
#define FEDBERRY_RUNTIME_MODEL_H_

// The tensor type only: <torch/torch.h> (LibTorch's whole C++ frontend) costs
// a translation unit about six times as much to compile, and most code here
// only moves, checks or combines tensors. runtime/nn_model.h has what
// torch::nn modules need.
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fedberry::runtime {

struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};
using NamedTensors = std::vector<NamedTensor>;

class Model {
 public:
  virtual ~Model() = default;
  // For logs and checkpoints: "lenet5", "torchscript:model.pt".
  virtual const std::string& name() const = 0;
  // Output for a batch [N, ...input shape].
  virtual at::Tensor Forward(const at::Tensor& x) = 0;
  // Trainable parameters, for the optimizer.
  virtual std::vector<at::Tensor> Parameters() = 0;
  // Copies (detached, contiguous, on CPU) of parameters then buffers.
  virtual NamedTensors State() = 0;
  // Copies `state` into the parameters and buffers. InvalidArgument when
  // names, order or shapes do not match.
  virtual absl::Status LoadState(const NamedTensors& state) = 0;
  // Training or evaluation mode (dropout, batch norm).
  virtual void SetTraining(bool on) = 0;
  // The model's own loss(output, target), when it defines one.
  virtual bool HasOwnLoss() const { return false; }
  virtual at::Tensor OwnLoss(const at::Tensor& output,
                             const at::Tensor& target);
};

// Copies of `tensors` under `names`.
NamedTensors CopyState(const std::vector<std::string>& names,
                       const std::vector<at::Tensor>& tensors);
// Copies `state` into `targets`, checking names, count and shapes.
absl::Status CopyInto(const std::vector<std::string>& names,
                      std::vector<at::Tensor>& targets,
                      const NamedTensors& state);
// Deep copy.
NamedTensors CloneState(const NamedTensors& state);

// What a LibTorch or TorchScript exception says, without the C++ backtrace
// or the TorchScript traceback: for an error inside a scripted forward, its
// last line (e.g. "RuntimeError: mat1 and mat2 shapes cannot be
// multiplied (4x8 and 5x32)").
std::string DescribeTorchError(const std::exception& e);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_MODEL_H_
