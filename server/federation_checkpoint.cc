#include "server/federation_checkpoint.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "checkpoint/torch_archive.h"
#include "google/protobuf/util/message_differencer.h"
#include "runtime/training_plan.h"
#include "server/federation_state_json.h"
#include "server/json_text.h"

namespace fedberry::server {
namespace {

constexpr char kStrategyFile[] = "strategy.pt";
// Asynchronous rounds: the models boards' tasks pulled and the buffer.
constexpr char kVersionsFile[] = "versions.pt";

// The tensors of `tensors` as archive entries under `prefix`.
void WriteTensors(torch::serialize::OutputArchive& a, const std::string& prefix,
                  const runtime::NamedTensors& tensors) {
  for (const auto& t : tensors) a.write(prefix + t.name, t.tensor);
}

runtime::NamedTensors ReadTensors(torch::serialize::InputArchive& a,
                                  const std::string& prefix,
                                  const std::vector<std::string>& names) {
  runtime::NamedTensors tensors;
  for (const auto& n : names) {
    torch::Tensor t;
    a.read(prefix + n, t);
    tensors.push_back({n, t});
  }
  return tensors;
}

// The asynchronous state: its records into `state`, its tensors into
// kVersionsFile.
absl::Status EncodeAsync(const AsyncState& async,
                         std::vector<checkpoint::CheckpointFile>& files,
                         nlohmann::json& state) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : async.tasks) {
    tasks.push_back({{"client_id", t.client_id},
                     {"round", t.round},
                     {"task_id", t.task_id},
                     {"seed", t.seed}});
  }
  nlohmann::json models = nlohmann::json::array();
  for (const auto& [round, model] : async.models) models.push_back(round);
  nlohmann::json buffer = nlohmann::json::array();
  for (const auto& b : async.buffer) {
    buffer.push_back({{"samples", b.samples}, {"staleness", b.staleness}});
  }
  state["async"] = {{"tasks", tasks},
                    {"expired", async.expired},
                    {"models", models},
                    {"buffer", buffer},
                    {"rng", async.rng}};
  FEDBERRY_ASSIGN_OR_RETURN(
      std::string bytes,
      checkpoint::ArchiveToBytes([&](torch::serialize::OutputArchive& a) {
        for (const auto& [round, model] : async.models) {
          WriteTensors(a, absl::StrCat("model/", round, "/"), *model);
        }
        for (size_t i = 0; i < async.buffer.size(); ++i) {
          WriteTensors(a, absl::StrCat("buffer/", i, "/"),
                       async.buffer[i].update);
        }
      }));
  files.push_back({kVersionsFile, std::move(bytes)});
  return absl::OkStatus();
}

// The asynchronous state of `loaded` (its record `j`), whose models have
// the tensors `names`. DataLoss when its file is missing or malformed.
absl::StatusOr<AsyncState> DecodeAsync(
    const checkpoint::LoadedCheckpoint& loaded, const nlohmann::json& j,
    const std::vector<std::string>& names) {
  AsyncState async;
  std::vector<uint64_t> rounds;
  try {
    for (const auto& t : j.at("tasks")) {
      async.tasks.push_back(
          {t.at("client_id").get<std::string>(), t.at("round").get<uint64_t>(),
           t.at("task_id").get<std::string>(), t.at("seed").get<uint64_t>()});
    }
    async.expired = j.at("expired").get<std::map<std::string, uint64_t>>();
    rounds = j.at("models").get<std::vector<uint64_t>>();
    async.rng = j.value("rng", "");
    for (const auto& b : j.at("buffer")) {
      async.buffer.push_back(
          {{}, b.at("samples").get<uint64_t>(), b.at("staleness").get<int>()});
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", loaded.name,
                     " has a malformed async record: ", e.what()));
  }
  auto it = loaded.files.find(kVersionsFile);
  if (it == loaded.files.end()) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", loaded.name, " lacks ", kVersionsFile));
  }
  FEDBERRY_RETURN_IF_ERROR(checkpoint::ArchiveFromBytes(
      it->second, absl::StrCat(loaded.name, "/", kVersionsFile),
      [&](torch::serialize::InputArchive& a) {
        for (uint64_t round : rounds) {
          async.models[round] = std::make_shared<const runtime::NamedTensors>(
              ReadTensors(a, absl::StrCat("model/", round, "/"), names));
        }
        for (size_t i = 0; i < async.buffer.size(); ++i) {
          async.buffer[i].update =
              ReadTensors(a, absl::StrCat("buffer/", i, "/"), names);
        }
      }));
  return async;
}

}  // namespace

absl::StatusOr<std::vector<checkpoint::CheckpointFile>>
EncodeFederationCheckpoint(const FederationSnapshot& snapshot,
                           const v1::TrainingPlan& plan) {
  FEDBERRY_ASSIGN_OR_RETURN(
      std::string model,
      checkpoint::ArchiveToBytes([&](torch::serialize::OutputArchive& a) {
        WriteTensors(a, "", *snapshot.global);
      }));
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& c : snapshot.clients) {
    clients.push_back({{"id", c.id},
                       {"name", c.name},
                       {"num_samples", c.num_samples},
                       {"allow_data_moves", c.allow_data_moves},
                       {"sample_bytes", c.sample_bytes},
                       {"boards", c.boards},
                       {"client_version", c.client_version}});
  }
  nlohmann::json names = nlohmann::json::array();
  for (const auto& t : *snapshot.global) names.push_back(t.name);
  nlohmann::json strategy_names = nlohmann::json::array();
  for (const auto& t : snapshot.strategy_state) {
    strategy_names.push_back(t.name);
  }
  nlohmann::json history = nlohmann::json::array();
  for (const auto& r : snapshot.history)
    history.push_back(RoundReportToJson(r));
  nlohmann::json state = {
      {"kind", "server-federation"},
      {"next_round", snapshot.next_round},
      {"model", runtime::ModelIdOf(plan)},
      {"plan", ProtoToJson(plan)},
      {"tensors", names},
      {"strategy_tensors", strategy_names},
      {"clients", clients},
      {"history", history},
      {"capacities", CapacitiesToJson(snapshot.capacities)}};
  if (!snapshot.budget_state.empty()) {
    state["budget"] = nlohmann::json::parse(snapshot.budget_state, nullptr,
                                            /*allow_exceptions=*/false);
  }
  std::vector<checkpoint::CheckpointFile> async_files;
  if (snapshot.async) {
    FEDBERRY_RETURN_IF_ERROR(EncodeAsync(*snapshot.async, async_files, state));
  }
  std::vector<checkpoint::CheckpointFile> files = {
      {"model.pt", std::move(model)}, {"state.json", JsonText(state, 1)}};
  if (!snapshot.strategy_state.empty()) {
    FEDBERRY_ASSIGN_OR_RETURN(
        std::string strategy,
        checkpoint::ArchiveToBytes([&](torch::serialize::OutputArchive& a) {
          WriteTensors(a, "", snapshot.strategy_state);
        }));
    files.push_back({kStrategyFile, std::move(strategy)});
  }
  for (auto& f : async_files) files.push_back(std::move(f));
  return files;
}

absl::StatusOr<DecodedFederation> DecodeFederationCheckpoint(
    const checkpoint::LoadedCheckpoint& loaded) {
  auto state_it = loaded.files.find("state.json");
  auto model_it = loaded.files.find("model.pt");
  if (state_it == loaded.files.end() || model_it == loaded.files.end()) {
    return absl::DataLossError(absl::StrCat("checkpoint ", loaded.name,
                                            " lacks state.json or model.pt"));
  }
  auto j = nlohmann::json::parse(state_it->second, nullptr, false);
  if (j.is_discarded() || j.value("kind", "") != "server-federation") {
    return absl::DataLossError(absl::StrCat(
        "checkpoint ", loaded.name, " holds no server federation state"));
  }
  DecodedFederation out;
  out.name = loaded.name;
  std::vector<std::string> names, strategy_names;
  try {
    out.model_name = j.at("model").get<std::string>();
    if (j.contains("plan")) {
      out.plan.emplace();
      ProtoFromJson(j, "plan", &*out.plan);
    }
    out.snapshot.next_round = j.at("next_round").get<uint64_t>();
    names = j.at("tensors").get<std::vector<std::string>>();
    // Absent from checkpoints written before strategies kept state.
    strategy_names = j.value("strategy_tensors", std::vector<std::string>{});
    for (const auto& c : j.at("clients")) {
      // The data-move and gateway fields are absent from older checkpoints.
      out.snapshot.clients.push_back(
          {c.at("id").get<std::string>(), c.at("name").get<std::string>(),
           c.at("num_samples").get<uint64_t>(),
           c.value("allow_data_moves", false),
           c.value("sample_bytes", uint64_t{0}), c.value("boards", uint32_t{0}),
           c.value("client_version", "")});
    }
    for (const auto& r : j.at("history")) {
      out.snapshot.history.push_back(RoundReportFromJson(r));
    }
    // Absent from checkpoints written before the planners kept them.
    if (j.contains("capacities")) {
      out.snapshot.capacities = CapacitiesFromJson(j["capacities"]);
    }
    if (j.contains("budget")) out.snapshot.budget_state = j["budget"].dump();
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("checkpoint ", loaded.name,
                     " has a malformed state record: ", e.what()));
  }
  runtime::NamedTensors model;
  FEDBERRY_RETURN_IF_ERROR(checkpoint::ArchiveFromBytes(
      model_it->second, absl::StrCat(loaded.name, "/model.pt"),
      [&](torch::serialize::InputArchive& a) {
        model = ReadTensors(a, "", names);
      }));
  out.snapshot.global =
      std::make_shared<const runtime::NamedTensors>(std::move(model));
  if (j.contains("async")) {
    FEDBERRY_ASSIGN_OR_RETURN(out.snapshot.async,
                              DecodeAsync(loaded, j["async"], names));
  }
  if (!strategy_names.empty()) {
    auto strategy_it = loaded.files.find(kStrategyFile);
    if (strategy_it == loaded.files.end()) {
      return absl::DataLossError(
          absl::StrCat("checkpoint ", loaded.name, " lacks ", kStrategyFile,
                       ", the state of its aggregation strategy"));
    }
    FEDBERRY_RETURN_IF_ERROR(checkpoint::ArchiveFromBytes(
        strategy_it->second, absl::StrCat(loaded.name, "/", kStrategyFile),
        [&](torch::serialize::InputArchive& a) {
          out.snapshot.strategy_state = ReadTensors(a, "", strategy_names);
        }));
  }
  return out;
}

absl::Status CheckSamePlan(const DecodedFederation& decoded,
                           const v1::TrainingPlan& plan) {
  const std::string hint =
      " (give another --output for a new job, or --noresume to start this "
      "one over)";
  if (!decoded.plan) {
    if (decoded.model_name == runtime::ModelIdOf(plan)) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint ", decoded.name, " is for model '",
        base::Printable(decoded.model_name, 200),
        "', but this job's model is '", runtime::ModelIdOf(plan), "'", hint));
  }
  google::protobuf::util::MessageDifferencer differ;
  std::string differences;
  differ.ReportDifferencesToString(&differences);
  if (differ.Compare(*decoded.plan, plan)) return absl::OkStatus();
  differences = absl::StrReplaceAll(
      absl::StripTrailingAsciiWhitespace(differences), {{"\n", "; "}});
  return absl::FailedPreconditionError(absl::StrCat(
      "checkpoint ", decoded.name,
      " was made under another training plan; checkpoint -> this job: ",
      base::Printable(differences, 2000), hint));
}

}  // namespace fedberry::server
