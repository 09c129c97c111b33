// The models fedberry trains, made by name, and the model state that moves
// between server and clients: an ordered list of named tensors (parameters,
// then buffers), as a state_dict.
// Thread-safety: a Net is not safe for concurrent training; NamedTensors are
// plain values.
#ifndef FEDBERRY_RUNTIME_MODEL_H_
#define FEDBERRY_RUNTIME_MODEL_H_

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::runtime {

struct NamedTensor {
  std::string name;
  torch::Tensor tensor;
};
using NamedTensors = std::vector<NamedTensor>;

// An image classifier taking [N, 1, 28, 28] float input, returning logits.
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

// Names MakeNet accepts: "lenet5" (LeNet-5, 61k parameters), "mlp" (small
// 784-32-10 perceptron for tests), "wide-mlp" (784-1536-10, ~4.8 MB of fp32,
// larger than gRPC's default 4 MB message limit).
std::vector<std::string> ModelNames();

// Builds a freshly initialised model; weights come from torch's global RNG,
// so callers seed it (torch::manual_seed) for reproducible weights.
// InvalidArgument for an unknown name.
absl::StatusOr<std::shared_ptr<Net>> MakeNet(const std::string& name);

// Copies (detached, contiguous, on CPU) of the model's parameters and buffers.
NamedTensors StateOf(torch::nn::Module& module);

// Copies `state` into the module's parameters and buffers. InvalidArgument
// when names, order or shapes do not match the module.
absl::Status LoadState(torch::nn::Module& module, const NamedTensors& state);

// Deep copy.
NamedTensors CloneState(const NamedTensors& state);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_MODEL_H_
