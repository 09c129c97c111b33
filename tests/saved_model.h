// The tensors of a model saved by fedberry-server or a client
// (global_model.pt: a LibTorch archive of named tensors), in key order, and
// the initial model of a job on a zoo model.
#ifndef FEDBERRY_TESTS_SAVED_MODEL_H_
#define FEDBERRY_TESTS_SAVED_MODEL_H_

#include <torch/serialize.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/model_zoo.h"

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

// The same by name.
inline std::map<std::string, torch::Tensor> ReadSavedNamedModel(
    const std::string& path) {
  torch::serialize::InputArchive a;
  a.load_from(path);
  std::map<std::string, torch::Tensor> out;
  for (const auto& key : a.keys()) a.read(key, out[key]);
  return out;
}

// The model a fedberry-server --model=`name` --seed=`seed` job of 28x28
// images starts from: the zoo's, made right after torch's RNG is seeded
// (links fedberry::runtime).
inline std::map<std::string, torch::Tensor> InitialZooModel(
    const std::string& name, uint64_t seed) {
  torch::manual_seed(seed);
  std::map<std::string, torch::Tensor> out;
  for (auto& t : (*runtime::MakeImageModel(name))->State()) {
    out[t.name] = t.tensor;
  }
  return out;
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_SAVED_MODEL_H_
