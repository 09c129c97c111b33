#include "runtime/nn_model.h"

namespace fedberry::runtime {

void ModuleTensors(torch::nn::Module& module, std::vector<std::string>* names,
                   std::vector<torch::Tensor>* tensors) {
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    names->push_back(item.key());
    tensors->push_back(item.value());
  }
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    names->push_back(item.key());
    tensors->push_back(item.value());
  }
}

}  // namespace fedberry::runtime
