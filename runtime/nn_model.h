// A Model over a torch::nn::Module whose forward takes one tensor (the
// model zoo's networks). Needs LibTorch's C++ frontend, so it is apart from
// runtime/model.h.
// Thread-safety: as Model.
#ifndef FEDBERRY_RUNTIME_NN_MODEL_H_
#define FEDBERRY_RUNTIME_NN_MODEL_H_

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/model.h"

namespace fedberry::runtime {

// A Model over a torch::nn::Module whose forward takes one tensor.
template <typename Net>
class NnModel : public Model {
 public:
  NnModel(std::string name, std::shared_ptr<Net> net)
      : name_(std::move(name)), net_(std::move(net)) {}
  const std::string& name() const override { return name_; }
  at::Tensor Forward(const at::Tensor& x) override { return net_->forward(x); }
  std::vector<at::Tensor> Parameters() override { return net_->parameters(); }
  NamedTensors State() override;
  absl::Status LoadState(const NamedTensors& state) override;
  void SetTraining(bool on) override { net_->train(on); }

 private:
  std::string name_;
  std::shared_ptr<Net> net_;
};

// The parameters then buffers of a module, with their names.
void ModuleTensors(torch::nn::Module& module, std::vector<std::string>* names,
                   std::vector<at::Tensor>* tensors);

template <typename Net>
NamedTensors NnModel<Net>::State() {
  std::vector<std::string> names;
  std::vector<at::Tensor> tensors;
  ModuleTensors(*net_, &names, &tensors);
  return CopyState(names, tensors);
}

template <typename Net>
absl::Status NnModel<Net>::LoadState(const NamedTensors& state) {
  std::vector<std::string> names;
  std::vector<at::Tensor> tensors;
  ModuleTensors(*net_, &names, &tensors);
  return CopyInto(names, tensors, state);
}

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_NN_MODEL_H_
