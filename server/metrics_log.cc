#include "server/metrics_log.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/atomic_write.h"
#include "base/file_system.h"
#include "base/status_macros.h"
#include "server/json_text.h"

namespace fedberry::server {
namespace {

// Only the readings the board took: an absent reading stays absent.
void AddResources(const v1::ResourceMetrics& r, nlohmann::json& line) {
  if (r.has_wall_seconds()) line["client_wall_seconds"] = r.wall_seconds();
  if (r.has_cpu_seconds()) line["cpu_seconds"] = r.cpu_seconds();
  if (r.has_cpu_utilization()) line["cpu_utilization"] = r.cpu_utilization();
  if (r.has_samples_per_second()) {
    line["samples_per_second"] = r.samples_per_second();
  }
  if (r.has_rss_bytes()) line["rss_bytes"] = r.rss_bytes();
  if (r.has_peak_rss_bytes()) line["peak_rss_bytes"] = r.peak_rss_bytes();
  if (r.has_round_peak_rss_bytes()) {
    line["round_peak_rss_bytes"] = r.round_peak_rss_bytes();
  }
  if (r.has_rpc_sent_bytes()) line["rpc_sent_bytes"] = r.rpc_sent_bytes();
  if (r.has_rpc_received_bytes()) {
    line["rpc_received_bytes"] = r.rpc_received_bytes();
  }
  if (r.has_interface_rx_bytes()) {
    line["interface_rx_bytes"] = r.interface_rx_bytes();
  }
  if (r.has_interface_tx_bytes()) {
    line["interface_tx_bytes"] = r.interface_tx_bytes();
  }
  if (r.has_watchdog_pauses()) line["watchdog_pauses"] = r.watchdog_pauses();
  if (r.has_paused_seconds()) line["paused_seconds"] = r.paused_seconds();
  if (r.has_resource_samples()) {
    line["resource_samples"] = r.resource_samples();
  }
}

nlohmann::json DeviceJson(const v1::DeviceInfo& d) {
  nlohmann::json j = nlohmann::json::object();
  if (!d.hostname().empty()) j["hostname"] = d.hostname();
  if (!d.architecture().empty()) j["architecture"] = d.architecture();
  if (d.cores() > 0) j["cores"] = d.cores();
  if (d.total_memory_bytes() > 0) {
    j["total_memory_bytes"] = d.total_memory_bytes();
  }
  if (!d.cpu_model().empty()) j["cpu_model"] = d.cpu_model();
  if (!d.kernel().empty()) j["kernel"] = d.kernel();
  if (!d.os().empty()) j["os"] = d.os();
  return j;
}

constexpr char kPlanRefused[] = "plan_refused";
constexpr char kEvaluation[] = "evaluation";

// `prefix`loss, and accuracy or rmse and mae.
void AddEvalFigures(const runtime::EvalResult& e, const std::string& prefix,
                    nlohmann::json& line) {
  line[prefix + "loss"] = e.mean_loss;
  if (e.regression) {
    line[prefix + "rmse"] = e.rmse;
    line[prefix + "mae"] = e.mae;
  } else {
    line[prefix + "accuracy"] = e.accuracy;
  }
}

// The round's model on the boards: rounds.jsonl's boards_eval_* fields.
// Figures only when some board reported them (absent, never 0).
void AddBoardEval(const BoardEvalSummary& b, nlohmann::json& line) {
  line["boards_eval_samples"] = b.combined.samples;
  line["boards_eval_boards"] = b.boards;
  line["boards_eval_asked"] = b.asked;
  line["boards_eval_declined"] = b.declined;
  line["boards_eval_seconds"] = b.seconds;
  if (b.boards > 0) {
    AddEvalFigures(b.combined, "boards_eval_", line);
    line["boards_eval_min"] = b.min;
    line["boards_eval_median"] = b.median;
    line["boards_eval_max"] = b.max;
  }
  if (b.personalized) {
    AddEvalFigures(*b.personalized, "boards_eval_personalized_", line);
  }
}

// Differential privacy: rounds.jsonl's dp_* fields.
void AddPrivacy(const PrivacyFigures& p, nlohmann::json& line) {
  line["dp_epsilon"] = p.epsilon;
  line["dp_delta"] = p.delta;
  line["dp_steps"] = p.steps;
  line["dp_sampling_rate"] = p.sampling_rate;
  line["dp_noise_multiplier"] = p.noise_multiplier;
  line["dp_clip"] = p.clip;
  line["dp_clipped_fraction"] = p.clipped_fraction;
  if (p.local) line["dp_local"] = true;
}

// Secure aggregation: rounds.jsonl's secagg_* fields; the by-stage lists
// follow the stages' order (advertise keys, share keys, masked input,
// unmask).
void AddSecAgg(const SecAggFigures& f, nlohmann::json& line) {
  line["secagg_boards_started"] = f.started;
  line["secagg_boards_survived"] = f.survived;
  line["secagg_neighbours"] = f.neighbours;
  line["secagg_threshold"] = f.threshold;
  line["secagg_dropped_by_stage"] = f.dropped_by_stage;
  line["secagg_seconds_by_stage"] = f.seconds_by_stage;
  line["secagg_bytes_up_by_stage"] = f.bytes_up_by_stage;
  line["secagg_bytes_up"] = f.bytes_up();
}

// One clients.jsonl line per board that evaluated the round's model.
void WriteBoardEvalLines(uint64_t round, const BoardEvalSummary& b,
                         std::ostream& out) {
  for (const BoardEvalEntry& e : b.per_board) {
    nlohmann::json line = {{"event", kEvaluation},
                           {"round", round},
                           {"client", e.client_name},
                           {"samples", e.global.samples}};
    AddEvalFigures(e.global, "", line);
    if (e.personalized) AddEvalFigures(*e.personalized, "personalized_", line);
    out << JsonText(line) << '\n';
  }
}

// The lines of an existing JSON-lines file that `keep` accepts, parsed.
std::vector<std::pair<std::string, nlohmann::json>> KeptLines(
    const std::string& path,
    const std::function<bool(const nlohmann::json&)>& keep) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && keep(j)) out.emplace_back(line, std::move(j));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsLog>> MetricsLog::Open(
    const std::string& dir, const std::vector<RoundReport>& history) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create output folder ", dir, ": ", ec.message()));
  }
  auto log = std::unique_ptr<MetricsLog>(new MetricsLog);
  {
    // Replace, not append: lines of rounds after the checkpoint are redone.
    std::ostringstream rounds, clients;
    std::set<uint64_t> done;
    for (const auto& r : history) done.insert(r.round);
    const auto in_history = [&](const nlohmann::json& j) {
      return j.contains("round") && j["round"].is_number_unsigned() &&
             done.count(j["round"].get<uint64_t>()) > 0;
    };
    std::map<uint64_t, std::string> kept_rounds;
    if (!history.empty()) {
      for (const auto& [line, j] :
           KeptLines(dir + "/clients.jsonl", [&](const nlohmann::json& j) {
             return j.value("event", "") == kPlanRefused || in_history(j);
           })) {
        clients << line << "\n";
        if (j.contains("device") && j.contains("client_id") &&
            j["client_id"].is_string()) {
          log->described_.insert(j["client_id"].get<std::string>());
        }
      }
      for (auto& [line, j] : KeptLines(dir + "/rounds.jsonl", in_history)) {
        kept_rounds.emplace(j["round"].get<uint64_t>(), std::move(line));
      }
    }
    for (const auto& r : history) {
      if (auto it = kept_rounds.find(r.round); it != kept_rounds.end()) {
        rounds << it->second << "\n";
      } else {
        // Lost from the file: the summary the checkpoint kept.
        Format(r, rounds, clients, log->described_);
      }
    }
    // Each file is replaced whole and durably (checkpoint/atomic_write.h):
    // a crash leaves the old lines or the new ones, never half of them.
    base::FileSystem& fs = base::FileSystem::Default();
    FEDBERRY_RETURN_IF_ERROR(
        base::WriteFileAtomically(fs, dir + "/rounds.jsonl", rounds.str()));
    FEDBERRY_RETURN_IF_ERROR(
        base::WriteFileAtomically(fs, dir + "/clients.jsonl", clients.str()));
  }
  log->rounds_.open(dir + "/rounds.jsonl", std::ios::app);
  log->clients_.open(dir + "/clients.jsonl", std::ios::app);
  if (!log->rounds_ || !log->clients_) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write metrics files in ", dir));
  }
  return log;
}

void MetricsLog::WriteRefusedBoard(const std::string& name,
                                   const std::string& reason) {
  nlohmann::json line = {
      {"event", kPlanRefused}, {"client", name}, {"reason", reason}};
  absl::MutexLock lock(&mu_);
  clients_ << JsonText(line) << '\n';
  clients_.flush();
}

void MetricsLog::Write(const RoundReport& report) {
  absl::MutexLock lock(&mu_);
  Format(report, rounds_, clients_, described_);
  rounds_.flush();
  clients_.flush();
}

void MetricsLog::Format(const RoundReport& report, std::ostream& rounds_,
                        std::ostream& clients_,
                        std::set<std::string>& described) {
  double train_max = 0, train_sum = 0;
  for (const auto& c : report.clients) {
    nlohmann::json line = {
        {"round", report.round},
        {"client_id", c.client_id},
        {"client", c.client_name},
        {"num_samples", c.num_samples},
        {"train_loss", c.metrics.train_loss()},
        {"train_accuracy", c.metrics.train_accuracy()},
        {"train_seconds", c.metrics.train_seconds()},
        {"steps", c.metrics.steps()},
    };
    AddResources(c.resources, line);
    // The board's facts once per client (per id: a rejoined board repeats).
    if (described.insert(c.client_id).second) {
      nlohmann::json device = DeviceJson(c.device);
      if (!device.empty()) line["device"] = std::move(device);
    }
    clients_ << JsonText(line) << '\n';
    train_max = std::max(train_max, c.metrics.train_seconds());
    train_sum += c.metrics.train_seconds();
  }
  nlohmann::json line = {
      {"round", report.round},
      {"selected", report.selected},
      {"participants", report.participants},
      {"dropped", report.dropped},
      {"rejected", report.rejected},
      {"stragglers", report.stragglers},
      {"paused_stragglers", report.paused_stragglers},
      {"declined", report.declined},
      {"released_stragglers", report.released_stragglers},
      {"cut_off", report.cut_off},
      {"late_updates", report.late_updates},
      {"round_seconds", report.round_seconds},
      {"elapsed_seconds", report.elapsed_seconds},
      {"makespan_seconds", report.makespan_seconds},
      {"aggregation_seconds", report.aggregation_seconds},
      {"eval_seconds", report.eval_seconds},
      {"eval_overlapped", report.eval_overlapped},
      {"max_train_seconds", train_max},
      {"mean_train_seconds",
       report.clients.empty() ? 0.0 : train_sum / report.clients.size()},
  };
  if (!report.planner.empty()) line["planner"] = report.planner;
  if (report.planned_makespan_seconds > 0) {
    line["planned_makespan_seconds"] = report.planned_makespan_seconds;
  }
  if (report.moved_samples > 0) line["moved_samples"] = report.moved_samples;
  if (!report.refused_result.empty()) {
    line["refused_result"] = report.refused_result;
  }
  if (report.eval) AddEvalFigures(*report.eval, "test_", line);
  if (report.board_eval) {
    AddBoardEval(*report.board_eval, line);
    WriteBoardEvalLines(report.round, *report.board_eval, clients_);
  }
  if (report.privacy) AddPrivacy(*report.privacy, line);
  if (report.secagg) AddSecAgg(*report.secagg, line);
  if (report.version) {
    // Asynchronous rounds: the round is the version it published.
    line["version"] = report.round;
    line["updates"] = report.version->updates;
    line["staleness_mean"] = report.version->staleness_mean;
    line["staleness_max"] = report.version->staleness_max;
  }
  rounds_ << JsonText(line) << '\n';
}

}  // namespace fedberry::server
