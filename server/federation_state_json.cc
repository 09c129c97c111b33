#include "server/federation_state_json.h"

#include <deque>
#include <utility>

#include "google/protobuf/util/json_util.h"
#include "server/json_number.h"

namespace fedberry::server {
namespace {

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

}  // namespace

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

nlohmann::json RoundReportToJson(const RoundReport& r) {
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

RoundReport RoundReportFromJson(const nlohmann::json& j) {
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

nlohmann::json CapacitiesToJson(
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

}  // namespace fedberry::server
