#include "client/training_checkpoint.h"

#include <torch/torch.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "checkpoint/torch_archive.h"

namespace fedberry::client {
namespace {

constexpr char kModel[] = "model.pt";
constexpr char kOptimizer[] = "optimizer.pt";
constexpr char kRng[] = "rng.pt";
constexpr char kState[] = "state.json";
constexpr char kResidual[] = "residual.pt";
constexpr char kResidualNext[] = "residual_next.pt";

absl::StatusOr<std::string> TensorsToBytes(const runtime::NamedTensors& t) {
  return checkpoint::ArchiveToBytes([&](torch::serialize::OutputArchive& a) {
    for (const auto& x : t) a.write(x.name, x.tensor);
  });
}

nlohmann::json Names(const runtime::NamedTensors& t) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& x : t) names.push_back(x.name);
  return names;
}

absl::Status TensorsFromFile(const checkpoint::LoadedCheckpoint& loaded,
                             const char* file,
                             const std::vector<std::string>& names,
                             runtime::NamedTensors* out) {
  if (names.empty()) return absl::OkStatus();
  auto it = loaded.files.find(file);
  if (it == loaded.files.end()) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", loaded.name, " has no ", file));
  }
  return checkpoint::ArchiveFromBytes(it->second,
                                      absl::StrCat(loaded.name, "/", file),
                                      [&](torch::serialize::InputArchive& a) {
                                        for (const auto& n : names) {
                                          torch::Tensor t;
                                          a.read(n, t);
                                          out->push_back({n, t});
                                        }
                                      });
}

absl::StatusOr<const std::string*> File(
    const checkpoint::LoadedCheckpoint& loaded, const char* name) {
  auto it = loaded.files.find(name);
  if (it == loaded.files.end()) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", loaded.name, " has no ", name));
  }
  return &it->second;
}

}  // namespace

absl::StatusOr<std::vector<checkpoint::CheckpointFile>>
EncodeTrainingCheckpoint(const TrainingSnapshot& s, runtime::Model& model,
                         torch::optim::Optimizer* optimizer) {
  std::vector<checkpoint::CheckpointFile> files;
  // Named tensors, whatever built the model (zoo, TorchScript).
  FEDBERRY_ASSIGN_OR_RETURN(std::string bytes, TensorsToBytes(model.State()));
  files.push_back({kModel, std::move(bytes)});
  if (!s.residual.empty()) {
    FEDBERRY_ASSIGN_OR_RETURN(std::string r, TensorsToBytes(s.residual));
    files.push_back({kResidual, std::move(r)});
  }
  if (!s.residual_next.empty()) {
    FEDBERRY_ASSIGN_OR_RETURN(std::string r, TensorsToBytes(s.residual_next));
    files.push_back({kResidualNext, std::move(r)});
  }
  if (optimizer != nullptr) {
    FEDBERRY_ASSIGN_OR_RETURN(
        std::string opt,
        checkpoint::ArchiveToBytes(
            [&](torch::serialize::OutputArchive& a) { optimizer->save(a); }));
    files.push_back({kOptimizer, std::move(opt)});
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::string rng, checkpoint::CpuRngStateToBytes());
  files.push_back({kRng, std::move(rng)});
  uint64_t loss_bits;
  std::memcpy(&loss_bits, &s.cursor.loss_sum, sizeof(loss_bits));
  nlohmann::json j = {
      {"kind", "client-training"},
      {"round", s.round},
      {"task_id", s.task_id},
      {"model", s.model},
      {"plan", s.plan},
      {"data_seed", s.data_seed},
      {"noise_seed", s.noise_seed},
      {"finished", s.finished},
      {"step", s.cursor.step},
      {"planned", s.cursor.planned},
      {"samples", s.cursor.samples},
      {"correct", s.cursor.correct},
      // Bit-exact: a double's bytes survive JSON only via its integer image.
      {"loss_sum_bits", loss_bits},
      {"loss_sum", s.cursor.loss_sum},
      {"seconds", s.cursor.seconds},
      {"residual", Names(s.residual)},
      {"residual_next", Names(s.residual_next)},
  };
  files.push_back({kState, j.dump(2)});
  return files;
}

absl::StatusOr<TrainingSnapshot> DecodeTrainingSnapshot(
    const checkpoint::LoadedCheckpoint& loaded) {
  FEDBERRY_ASSIGN_OR_RETURN(const std::string* text, File(loaded, kState));
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || j.value("kind", "") != "client-training") {
    return absl::DataLossError(absl::StrCat(
        "checkpoint ", loaded.name, " has no client training state record"));
  }
  TrainingSnapshot s;
  std::vector<std::string> residual, residual_next;
  try {
    s.round = j.at("round").get<uint64_t>();
    s.task_id = j.at("task_id").get<std::string>();
    s.model = j.at("model").get<std::string>();
    s.plan = j.value("plan", std::string());
    s.data_seed = j.at("data_seed").get<uint64_t>();
    s.noise_seed = j.value("noise_seed", uint64_t{0});
    s.finished = j.at("finished").get<bool>();
    s.cursor.step = j.at("step").get<int64_t>();
    s.cursor.planned = j.at("planned").get<int64_t>();
    s.cursor.samples = j.at("samples").get<int64_t>();
    s.cursor.correct = j.at("correct").get<int64_t>();
    const uint64_t bits = j.at("loss_sum_bits").get<uint64_t>();
    std::memcpy(&s.cursor.loss_sum, &bits, sizeof(bits));
    s.cursor.seconds = j.at("seconds").get<double>();
    // Absent from checkpoints written before updates were encoded.
    residual = j.value("residual", std::vector<std::string>{});
    residual_next = j.value("residual_next", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", loaded.name,
                     " has a malformed state record: ", e.what()));
  }
  FEDBERRY_RETURN_IF_ERROR(
      TensorsFromFile(loaded, kResidual, residual, &s.residual));
  FEDBERRY_RETURN_IF_ERROR(
      TensorsFromFile(loaded, kResidualNext, residual_next, &s.residual_next));
  return s;
}

absl::Status RestoreModel(const checkpoint::LoadedCheckpoint& loaded,
                          runtime::Model& model) {
  FEDBERRY_ASSIGN_OR_RETURN(const std::string* bytes, File(loaded, kModel));
  runtime::NamedTensors state = model.State();
  FEDBERRY_RETURN_IF_ERROR(checkpoint::ArchiveFromBytes(
      *bytes, absl::StrCat(loaded.name, "/", kModel),
      [&](torch::serialize::InputArchive& a) {
        for (auto& t : state) a.read(t.name, t.tensor);
      }));
  absl::Status loaded_state = model.LoadState(state);
  if (!loaded_state.ok()) {
    return absl::DataLossError(
        absl::StrCat(loaded.name, "/", kModel, ": ", loaded_state.message()));
  }
  return absl::OkStatus();
}

absl::Status RestoreOptimizer(const checkpoint::LoadedCheckpoint& loaded,
                              torch::optim::Optimizer& optimizer) {
  FEDBERRY_ASSIGN_OR_RETURN(const std::string* bytes, File(loaded, kOptimizer));
  return checkpoint::ArchiveFromBytes(
      *bytes, absl::StrCat(loaded.name, "/", kOptimizer),
      [&](torch::serialize::InputArchive& a) { optimizer.load(a); });
}

absl::Status RestoreRng(const checkpoint::LoadedCheckpoint& loaded) {
  FEDBERRY_ASSIGN_OR_RETURN(const std::string* bytes, File(loaded, kRng));
  return checkpoint::RestoreCpuRngState(*bytes);
}

}  // namespace fedberry::client
