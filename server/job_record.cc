#include "server/job_record.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/str_cat.h"

namespace fedberry::server {
namespace {

using nlohmann::json;

absl::StatusOr<std::vector<json>> ReadLines(const std::string& path,
                                            bool required) {
  std::ifstream in(path);
  if (!in) {
    if (!required) return std::vector<json>{};
    return absl::NotFoundError(absl::StrCat(
        "cannot open ", path, ": is this a fedberry job's output folder?"));
  }
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::vector<json> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    json j = json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      if (i + 1 == lines.size()) break;  // torn last line of a crashed job
      return absl::DataLossError(
          absl::StrCat(path, " line ", i + 1, " is not a JSON object"));
    }
    out.push_back(std::move(j));
  }
  return out;
}

template <typename T>
std::optional<T> Opt(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<T>();
}
template <typename T>
T Or(const json& j, const char* key, T fallback) {
  return Opt<T>(j, key).value_or(fallback);
}
std::string Str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                               : std::string();
}
bool Bool(const json& j, const char* key) {
  return j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

template <typename T>
void Add(std::optional<T>& total, const std::optional<T>& v) {
  if (v) total = total.value_or(T{}) + *v;
}

// A line of rounds.jsonl. Board evaluation figures are RMSEs for a
// regression job, accuracies otherwise.
RoundRow ParseRound(const json& j) {
  RoundRow r;
  r.round = Or<int>(j, "round", 0);
  r.selected = Or<int>(j, "selected", 0);
  r.participants = Or<int>(j, "participants", 0);
  r.dropped = Or<int>(j, "dropped", 0);
  r.stragglers = Or<int>(j, "stragglers", 0);
  r.round_seconds = Or<double>(j, "round_seconds", 0);
  r.elapsed_seconds = Or<double>(j, "elapsed_seconds", 0);
  r.aggregation_seconds = Or<double>(j, "aggregation_seconds", 0);
  r.eval_seconds = Or<double>(j, "eval_seconds", 0);
  r.eval_overlapped = Bool(j, "eval_overlapped");
  r.max_train_seconds = Or<double>(j, "max_train_seconds", 0);
  r.test_accuracy = Opt<double>(j, "test_accuracy");
  r.test_loss = Opt<double>(j, "test_loss");
  r.test_rmse = Opt<double>(j, "test_rmse");
  r.test_mae = Opt<double>(j, "test_mae");
  r.refused_result = Str(j, "refused_result");
  const bool boards_rmse = j.contains("boards_eval_rmse");
  r.boards_eval =
      Opt<double>(j, boards_rmse ? "boards_eval_rmse" : "boards_eval_accuracy");
  r.dp_epsilon = Opt<double>(j, "dp_epsilon");
  r.dp_delta = Opt<double>(j, "dp_delta");
  r.dp_clipped_fraction = Opt<double>(j, "dp_clipped_fraction");
  r.secagg_started = Opt<int>(j, "secagg_boards_started");
  r.secagg_survived = Opt<int>(j, "secagg_boards_survived");
  r.secagg_bytes_up = Opt<double>(j, "secagg_bytes_up");
  r.updates = Opt<int>(j, "updates");
  r.staleness_mean = Opt<double>(j, "staleness_mean");
  r.staleness_max = Opt<int>(j, "staleness_max");
  r.boards_eval_min = Opt<double>(j, "boards_eval_min");
  r.boards_eval_max = Opt<double>(j, "boards_eval_max");
  r.boards_eval_personalized =
      Opt<double>(j, boards_rmse ? "boards_eval_personalized_rmse"
                                 : "boards_eval_personalized_accuracy");
  return r;
}

// A clients.jsonl "evaluation" line: a board's figure for a round's model.
BoardEvalRow ParseBoardEval(const json& j) {
  const bool rmse = j.contains("rmse");
  return {Or<int>(j, "round", 0), Str(j, "client"),
          Or<uint64_t>(j, "samples", 0),
          Or<double>(j, rmse ? "rmse" : "accuracy", 0),
          Opt<double>(j, rmse ? "personalized_rmse" : "personalized_accuracy")};
}

// A clients.jsonl line of a client's round.
ClientRow ParseClientRound(const json& j) {
  ClientRow c;
  c.round = Or<int>(j, "round", 0);
  c.client = Str(j, "client");
  if (c.client.empty()) c.client = Str(j, "client_id");
  c.num_samples = Or<uint64_t>(j, "num_samples", 0);
  c.train_seconds = Or<double>(j, "train_seconds", 0);
  c.train_loss = Or<double>(j, "train_loss", 0);
  c.client_wall_seconds = Opt<double>(j, "client_wall_seconds");
  c.cpu_seconds = Opt<double>(j, "cpu_seconds");
  c.cpu_utilization = Opt<double>(j, "cpu_utilization");
  c.samples_per_second = Opt<double>(j, "samples_per_second");
  c.paused_seconds = Opt<double>(j, "paused_seconds");
  c.rss_bytes = Opt<uint64_t>(j, "rss_bytes");
  c.peak_rss_bytes = Opt<uint64_t>(j, "peak_rss_bytes");
  c.round_peak_rss_bytes = Opt<uint64_t>(j, "round_peak_rss_bytes");
  c.rpc_sent_bytes = Opt<uint64_t>(j, "rpc_sent_bytes");
  c.rpc_received_bytes = Opt<uint64_t>(j, "rpc_received_bytes");
  c.interface_rx_bytes = Opt<uint64_t>(j, "interface_rx_bytes");
  c.interface_tx_bytes = Opt<uint64_t>(j, "interface_tx_bytes");
  c.watchdog_pauses = Opt<uint64_t>(j, "watchdog_pauses");
  return c;
}

DeviceRow ParseDevice(const json& d) {
  DeviceRow dev;
  dev.architecture = Str(d, "architecture");
  dev.cpu_model = Str(d, "cpu_model");
  dev.kernel = Str(d, "kernel");
  dev.os = Str(d, "os");
  dev.hostname = Str(d, "hostname");
  dev.cores = Opt<uint64_t>(d, "cores");
  dev.total_memory_bytes = Opt<uint64_t>(d, "total_memory_bytes");
  return dev;
}

// Adds the clients.jsonl lines to `record`: the boards' evaluations, and
// each client's rounds with its device from its first line that has one.
void AddClientLines(const std::vector<json>& lines, JobRecord& record) {
  std::set<std::string> names;
  for (const json& j : lines) {
    if (Str(j, "event") == "evaluation") {
      record.board_evals.push_back(ParseBoardEval(j));
      continue;
    }
    if (j.contains("event")) continue;  // e.g. a board refused at join
    ClientRow c = ParseClientRound(j);
    if (j.contains("device") && j["device"].is_object() &&
        !record.devices.count(c.client)) {
      record.devices[c.client] = ParseDevice(j["device"]);
    }
    names.insert(c.client);
    record.clients.push_back(std::move(c));
  }
  record.client_names.assign(names.begin(), names.end());
}

}  // namespace

std::vector<ClientSummary> SummarizeClients(const JobRecord& record) {
  std::vector<ClientSummary> out;
  for (const std::string& name : record.client_names) {
    ClientSummary s;
    s.client = name;
    int cpu_n = 0, sps_n = 0;
    for (const ClientRow& c : record.clients) {
      if (c.client != name) continue;
      ++s.rounds;
      s.train_seconds += c.train_seconds;
      if (c.cpu_utilization) ++cpu_n;
      if (c.samples_per_second) ++sps_n;
      Add(s.mean_cpu_utilization, c.cpu_utilization);
      Add(s.mean_samples_per_second, c.samples_per_second);
      Add(s.paused_seconds, c.paused_seconds);
      Add(s.rpc_sent_bytes, c.rpc_sent_bytes);
      Add(s.rpc_received_bytes, c.rpc_received_bytes);
      Add(s.interface_rx_bytes, c.interface_rx_bytes);
      Add(s.interface_tx_bytes, c.interface_tx_bytes);
      Add(s.watchdog_pauses, c.watchdog_pauses);
      for (const auto& peak : {c.peak_rss_bytes, c.round_peak_rss_bytes}) {
        if (peak)
          s.peak_rss_bytes = std::max(s.peak_rss_bytes.value_or(0), *peak);
      }
    }
    if (cpu_n > 0) *s.mean_cpu_utilization /= cpu_n;
    if (sps_n > 0) *s.mean_samples_per_second /= sps_n;
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<JobRecord> ReadJobRecord(const std::string& dir) {
  auto rounds = ReadLines(dir + "/rounds.jsonl", true);
  if (!rounds.ok()) return rounds.status();
  auto clients = ReadLines(dir + "/clients.jsonl", false);
  if (!clients.ok()) return clients.status();
  JobRecord record;
  for (const json& j : *rounds) {
    RoundRow r = ParseRound(j);
    record.regression |= r.test_rmse || j.contains("boards_eval_rmse");
    record.rounds.push_back(std::move(r));
  }
  AddClientLines(*clients, record);
  return record;
}

}  // namespace fedberry::server
