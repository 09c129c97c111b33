#include "server/federation_checkpoint.h"

#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "checkpoint/torch_archive.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "runtime/training_plan.h"
#include "server/json_number.h"
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

// Resource readings and device facts keep their proto form (absent readings
// stay absent) as embedded JSON objects.
nlohmann::json ProtoToJson(const google::protobuf::Message& m) {
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(m, &text).ok()) return {};
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

void ProtoFromJson(const nlohmann::json& j, const char* key,
                   google::protobuf::Message* m) {
  if (!j.contains(key)) return;
  // A field this build does not know is skipped rather than refused.
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  (void)google::protobuf::util::JsonStringToMessage(j[key].dump(), m, options);
}

nlohmann::json Numbers(const std::deque<double>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (double v : values) out.push_back(Number(v));
  return out;
}

std::deque<double> ReadNumbers(const nlohmann::json& j) {
  std::deque<double> out;
  for (const auto& v : j) out.push_back(ReadNumber(v));
  return out;
}

nlohmann::json EvalToJson(const runtime::EvalResult& e) {
  nlohmann::json j = {{"samples", e.samples},
                      {"loss", Number(e.mean_loss)},
                      {"accuracy", Number(e.accuracy)}};
  if (e.regression) {
    j["rmse"] = Number(e.rmse);
    j["mae"] = Number(e.mae);
  }
  return j;
}

runtime::EvalResult EvalFromJson(const nlohmann::json& j) {
  runtime::EvalResult e;
  e.samples = j.at("samples").get<int64_t>();
  e.mean_loss = ReadNumber(j.at("loss"));
  e.accuracy = ReadNumber(j.at("accuracy"));
  if (j.contains("rmse")) {
    e.regression = true;
    e.rmse = ReadNumber(j.at("rmse"));
    e.mae = ReadNumber(j.at("mae"));
  }
  return e;
}

nlohmann::json ToJson(const RoundReport& r) {
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& c : r.clients) {
    clients.push_back({{"client_id", c.client_id},
                       {"client", c.client_name},
                       {"num_samples", c.num_samples},
                       {"train_loss", Number(c.metrics.train_loss())},
                       {"train_accuracy", Number(c.metrics.train_accuracy())},
                       {"train_seconds", Number(c.metrics.train_seconds())},
                       {"steps", c.metrics.steps()},
                       {"resources", ProtoToJson(c.resources)},
                       {"device", ProtoToJson(c.device)}});
  }
  nlohmann::json j = {
      {"round", r.round},
      {"selected", r.selected},
      {"participants", r.participants},
      {"dropped", r.dropped},
      {"rejected", r.rejected},
      {"stragglers", r.stragglers},
      {"paused_stragglers", r.paused_stragglers},
      {"declined", r.declined},
      {"released_stragglers", r.released_stragglers},
      {"cut_off", r.cut_off},
      {"late_updates", r.late_updates},
      {"planner", r.planner},
      {"planned_makespan_seconds", Number(r.planned_makespan_seconds)},
      {"makespan_seconds", Number(r.makespan_seconds)},
      {"moved_samples", r.moved_samples},
      {"refused_result", r.refused_result},
      {"round_seconds", Number(r.round_seconds)},
      {"elapsed_seconds", Number(r.elapsed_seconds)},
      {"aggregation_seconds", Number(r.aggregation_seconds)},
      {"eval_seconds", Number(r.eval_seconds)},
      {"eval_overlapped", r.eval_overlapped},
      {"clients", clients}};
  if (r.eval) j["eval"] = EvalToJson(*r.eval);
  if (r.board_eval) {
    // The summary only: the per-board lines are in clients.jsonl.
    const BoardEvalSummary& b = *r.board_eval;
    j["board_eval"] = {
        {"asked", b.asked},       {"boards", b.boards},
        {"declined", b.declined}, {"combined", EvalToJson(b.combined)},
        {"min", Number(b.min)},   {"median", Number(b.median)},
        {"max", Number(b.max)},   {"seconds", Number(b.seconds)}};
    if (b.personalized) {
      j["board_eval"]["personalized"] = EvalToJson(*b.personalized);
    }
  }
  if (r.privacy) {
    const PrivacyFigures& p = *r.privacy;
    j["privacy"] = {{"epsilon", Number(p.epsilon)},
                    {"delta", Number(p.delta)},
                    {"steps", p.steps},
                    {"sampling_rate", Number(p.sampling_rate)},
                    {"noise_multiplier", Number(p.noise_multiplier)},
                    {"clip", Number(p.clip)},
                    {"clipped_fraction", Number(p.clipped_fraction)},
                    {"local", p.local}};
  }
  if (r.version) {
    j["version"] = {{"updates", r.version->updates},
                    {"staleness_mean", Number(r.version->staleness_mean)},
                    {"staleness_max", r.version->staleness_max}};
  }
  return j;
}

PrivacyFigures PrivacyFromJson(const nlohmann::json& j) {
  PrivacyFigures p;
  p.epsilon = ReadNumber(j.at("epsilon"));
  p.delta = ReadNumber(j.at("delta"));
  p.steps = j.at("steps").get<int64_t>();
  p.sampling_rate = ReadNumber(j.at("sampling_rate"));
  p.noise_multiplier = ReadNumber(j.at("noise_multiplier"));
  p.clip = ReadNumber(j.at("clip"));
  p.clipped_fraction = ReadNumber(j.at("clipped_fraction"));
  p.local = j.value("local", false);
  return p;
}

RoundReport FromJson(const nlohmann::json& j) {
  RoundReport r;
  r.round = j.at("round").get<uint64_t>();
  r.selected = j.at("selected").get<int>();
  r.participants = j.at("participants").get<int>();
  r.dropped = j.at("dropped").get<int>();
  r.rejected = j.at("rejected").get<int>();
  r.stragglers = j.value("stragglers", 0);
  r.refused_result = j.value("refused_result", "");
  // Absent from checkpoints written before they were kept: a restarted
  // server rewrites rounds.jsonl from this history.
  r.paused_stragglers = j.value("paused_stragglers", 0);
  r.declined = j.value("declined", 0);
  r.released_stragglers = j.value("released_stragglers", 0);
  r.cut_off = j.value("cut_off", 0);
  r.late_updates = j.value("late_updates", 0);
  r.planner = j.value("planner", "");
  if (j.contains("planned_makespan_seconds")) {
    r.planned_makespan_seconds = ReadNumber(j["planned_makespan_seconds"]);
  }
  if (j.contains("makespan_seconds")) {
    r.makespan_seconds = ReadNumber(j["makespan_seconds"]);
  }
  r.moved_samples = j.value("moved_samples", uint64_t{0});
  r.round_seconds = ReadNumber(j.at("round_seconds"));
  // Absent from checkpoints written before rounds carried it.
  if (j.contains("elapsed_seconds")) {
    r.elapsed_seconds = ReadNumber(j.at("elapsed_seconds"));
  }
  r.aggregation_seconds = ReadNumber(j.at("aggregation_seconds"));
  r.eval_seconds = ReadNumber(j.at("eval_seconds"));
  r.eval_overlapped = j.value("eval_overlapped", false);
  for (const auto& c : j.at("clients")) {
    ClientRoundReport cr;
    cr.client_id = c.at("client_id").get<std::string>();
    cr.client_name = c.at("client").get<std::string>();
    cr.num_samples = c.at("num_samples").get<uint64_t>();
    cr.metrics.set_train_loss(ReadNumber(c.at("train_loss")));
    cr.metrics.set_train_accuracy(ReadNumber(c.at("train_accuracy")));
    cr.metrics.set_train_seconds(ReadNumber(c.at("train_seconds")));
    cr.metrics.set_steps(c.at("steps").get<uint64_t>());
    ProtoFromJson(c, "resources", &cr.resources);
    ProtoFromJson(c, "device", &cr.device);
    r.clients.push_back(std::move(cr));
  }
  if (j.contains("eval")) r.eval = EvalFromJson(j["eval"]);
  if (j.contains("board_eval")) {
    const nlohmann::json& b = j["board_eval"];
    BoardEvalSummary summary;
    summary.asked = b.at("asked").get<int>();
    summary.boards = b.at("boards").get<int>();
    summary.declined = b.at("declined").get<int>();
    summary.combined = EvalFromJson(b.at("combined"));
    summary.min = ReadNumber(b.at("min"));
    summary.median = ReadNumber(b.at("median"));
    summary.max = ReadNumber(b.at("max"));
    summary.seconds = ReadNumber(b.at("seconds"));
    if (b.contains("personalized")) {
      summary.personalized = EvalFromJson(b["personalized"]);
    }
    r.board_eval = std::move(summary);
  }
  if (j.contains("privacy")) r.privacy = PrivacyFromJson(j["privacy"]);
  if (j.contains("version")) {
    const nlohmann::json& v = j["version"];
    r.version = VersionFigures{v.at("updates").get<int>(),
                               ReadNumber(v.at("staleness_mean")),
                               v.at("staleness_max").get<int>()};
  }
  return r;
}

nlohmann::json ToJson(
    const std::map<std::string, planner::CapacityHistory>& capacities) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, h] : capacities) {
    j[name] = {{"seconds_per_sample", Numbers(h.seconds_per_sample)},
               {"download_seconds_per_byte", Numbers(h.download_per_byte)},
               {"upload_seconds_per_byte", Numbers(h.upload_per_byte)},
               {"download_bytes", h.download_bytes},
               {"upload_bytes", h.upload_bytes}};
  }
  return j;
}

std::map<std::string, planner::CapacityHistory> CapacitiesFromJson(
    const nlohmann::json& j) {
  std::map<std::string, planner::CapacityHistory> out;
  for (const auto& [name, h] : j.items()) {
    planner::CapacityHistory& c = out[name];
    c.seconds_per_sample = ReadNumbers(h.at("seconds_per_sample"));
    c.download_per_byte = ReadNumbers(h.at("download_seconds_per_byte"));
    c.upload_per_byte = ReadNumbers(h.at("upload_seconds_per_byte"));
    c.download_bytes = h.at("download_bytes").get<uint64_t>();
    c.upload_bytes = h.at("upload_bytes").get<uint64_t>();
  }
  return out;
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
  for (const auto& r : snapshot.history) history.push_back(ToJson(r));
  nlohmann::json state = {{"kind", "server-federation"},
                          {"next_round", snapshot.next_round},
                          {"model", runtime::ModelIdOf(plan)},
                          {"plan", ProtoToJson(plan)},
                          {"tensors", names},
                          {"strategy_tensors", strategy_names},
                          {"clients", clients},
                          {"history", history},
                          {"capacities", ToJson(snapshot.capacities)}};
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
      out.snapshot.history.push_back(FromJson(r));
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
