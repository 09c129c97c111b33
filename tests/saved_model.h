// The tensors of a model saved by fedberry-server or a client
// (global_model.pt: a LibTorch archive of named tensors), in key order.
#ifndef FEDBERRY_TESTS_SAVED_MODEL_H_
#define FEDBERRY_TESTS_SAVED_MODEL_H_

#include <torch/serialize.h>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace fedberry::testing {

inline std::vector<torch::Tensor> ReadSavedModel(const std::string& path) {
  torch::serialize::InputArchive a;
  a.load_from(path);
  std::vector<torch::Tensor> out;
  for (const auto& key : a.keys()) {
    torch::Tensor t;
    a.read(key, t);
    out.push_back(t);
  }
  return out;
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_SAVED_MODEL_H_
