#include "runtime/torchscript_model.h"

#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/script.h>

#include <filesystem>
#include <mutex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_write.h"

namespace fedberry::runtime {
namespace {

class ScriptModel : public Model {
 public:
  ScriptModel(std::string name, torch::jit::Module module)
      : name_(std::move(name)), module_(std::move(module)) {
    loss_ = module_.find_method("loss");
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      names_.push_back(p.name);
      tensors_.push_back(p.value);
      parameters_.push_back(p.value);
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
      names_.push_back(b.name);
      tensors_.push_back(b.value);
    }
  }

  const std::string& name() const override { return name_; }
  torch::Tensor Forward(const torch::Tensor& x) override {
    return module_.forward({x}).toTensor();
  }
  std::vector<torch::Tensor> Parameters() override { return parameters_; }
  NamedTensors State() override { return CopyState(names_, tensors_); }
  absl::Status LoadState(const NamedTensors& state) override {
    return CopyInto(names_, tensors_, state);
  }
  void SetTraining(bool on) override { module_.train(on); }
  bool HasOwnLoss() const override { return loss_.has_value(); }
  void Save(std::ostream& out) { module_.save(out); }
  torch::Tensor OwnLoss(const torch::Tensor& output,
                        const torch::Tensor& target) override {
    return (*loss_)({output, target}).toTensor();
  }

 private:
  std::string name_;
  torch::jit::Module module_;
  c10::optional<torch::jit::Method> loss_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> tensors_;  // parameters, then buffers
  std::vector<torch::Tensor> parameters_;
};

// Submodules whose behaviour differs between train and eval mode. In a
// scripted module their forward reads `self.training`; in a traced one the
// mode it was traced in is baked into the graph.
std::vector<std::string> FrozenModeModules(const torch::jit::Module& module) {
  std::vector<std::string> out;
  for (const auto& m : module.named_modules()) {
    const auto type = m.value.type()->name();
    if (!type) continue;
    const std::string kind = type->name();
    if (!absl::StrContains(kind, "BatchNorm") &&
        !absl::StrContains(kind, "Dropout")) {
      continue;
    }
    auto forward = m.value.find_method("forward");
    if (!forward) continue;
    if (!absl::StrContains(forward->graph()->toString(), "name=\"training\"")) {
      out.push_back(
          absl::StrCat(m.name.empty() ? "<root>" : m.name, " (", kind, ")"));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<LoadedScript> LoadTorchScriptModel(
    const std::string& path, const std::string& display_name,
    const std::string* bytes) {
  std::error_code ec;
  if (bytes == nullptr && !std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(
        absl::StrCat("model file ", path, " does not exist"));
  }
  // The profiling executor re-optimises the graph during the first runs
  // and keeps a specialised copy; for training a fixed graph this costs
  // time and memory without a gain (bench/loop_bench: torchscript).
  static std::once_flag once;
  std::call_once(once, [] { torch::jit::setGraphExecutorOptimize(false); });
  torch::jit::Module module;
  try {
    if (bytes != nullptr) {
      std::istringstream in(*bytes);
      module = torch::jit::load(in, torch::kCPU);
    } else {
      module = torch::jit::load(path, torch::kCPU);
    }
  } catch (const std::exception& e) {
    std::string why = DescribeTorchError(e);
    if (const size_t nl = why.find('\n'); nl != std::string::npos) {
      why.resize(nl);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("model file ", path,
                     " is not a TorchScript module (save it with "
                     "torch.jit.script(model).save(PATH)): ",
                     why));
  }
  if (!module.find_method("forward")) {
    return absl::InvalidArgumentError(
        absl::StrCat("TorchScript module ", path, " has no forward method"));
  }
  LoadedScript out;
  for (const std::string& m : FrozenModeModules(module)) {
    out.warnings.push_back(absl::StrCat(
        "model ", path, ": ", m,
        " looks traced (its forward ignores train/eval mode, frozen when "
        "it was traced); export with torch.jit.script instead"));
  }
  const std::string name = display_name.empty()
                               ? std::filesystem::path(path).filename().string()
                               : display_name;
  out.model = std::make_unique<ScriptModel>(absl::StrCat("torchscript:", name),
                                            std::move(module));
  return out;
}

absl::Status SaveTorchScriptWithState(const std::string& source,
                                      const NamedTensors& state,
                                      const std::string& destination) {
  absl::StatusOr<LoadedScript> loaded = LoadTorchScriptModel(source);
  if (!loaded.ok()) return loaded.status();
  auto* script = static_cast<ScriptModel*>(loaded->model.get());
  if (absl::Status s = script->LoadState(state); !s.ok()) return s;
  std::ostringstream bytes;
  try {
    script->Save(bytes);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot write ", destination, ": ",
                                            DescribeTorchError(e)));
  }
  return base::WriteFileAtomically(base::FileSystem::Default(), destination,
                                   bytes.str());
}

}  // namespace fedberry::runtime
