// A Model loaded from a TorchScript file (torch.jit.script(model).save(...)
// in Python), so a job trains the user's own network.
// Thread-safety: LoadTorchScriptModel is safe to call concurrently; each
// Model is used by one thread at a time.
#ifndef FEDBERRY_RUNTIME_TORCHSCRIPT_MODEL_H_
#define FEDBERRY_RUNTIME_TORCHSCRIPT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::runtime {

struct LoadedScript {
  std::unique_ptr<Model> model;
  // Doubts worth a warning, e.g. a traced module with dropout or batch
  // norm, whose train/eval behaviour was frozen when it was traced.
  std::vector<std::string> warnings;
};

// Loads `path`, or `bytes` when given (the file's contents, already in
// memory; `path` then only names them). InvalidArgument naming the file when
// it is not a TorchScript module or has no forward method; NotFound when it
// does not exist. `display_name` names the model in logs (empty: the file's
// base name).
absl::StatusOr<LoadedScript> LoadTorchScriptModel(
    const std::string& path, const std::string& display_name = "",
    const std::string* bytes = nullptr);

// Writes the TorchScript module of `source` with `state` (e.g. the job's
// global model) in place of its weights to `destination`, so the trained
// model loads in Python with torch.jit.load. InvalidArgument when the state
// does not fit the module; Internal when LibTorch cannot write the file.
absl::Status SaveTorchScriptWithState(const std::string& source,
                                      const NamedTensors& state,
                                      const std::string& destination);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TORCHSCRIPT_MODEL_H_
