#include "server/metrics_log.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace fedberry::server {

absl::StatusOr<std::unique_ptr<MetricsLog>> MetricsLog::Open(
    const std::string& dir, const std::vector<RoundReport>& history) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create output folder ", dir, ": ", ec.message()));
  }
  {
    // Replace, not append: lines of rounds after the checkpoint are redone.
    std::ofstream rounds(dir + "/rounds.jsonl.tmp", std::ios::trunc);
    std::ofstream clients(dir + "/clients.jsonl.tmp", std::ios::trunc);
    for (const auto& r : history) Format(r, rounds, clients);
    if (!rounds || !clients) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write metrics files in ", dir));
    }
  }
  std::filesystem::rename(dir + "/rounds.jsonl.tmp", dir + "/rounds.jsonl", ec);
  if (!ec) {
    std::filesystem::rename(dir + "/clients.jsonl.tmp",
                            dir + "/clients.jsonl", ec);
  }
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot replace metrics files in ", dir, ": ", ec.message()));
  }
  auto log = std::unique_ptr<MetricsLog>(new MetricsLog);
  log->rounds_.open(dir + "/rounds.jsonl", std::ios::app);
  log->clients_.open(dir + "/clients.jsonl", std::ios::app);
  if (!log->rounds_ || !log->clients_) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write metrics files in ", dir));
  }
  return log;
}

void MetricsLog::Write(const RoundReport& report) {
  Format(report, rounds_, clients_);
  rounds_.flush();
  clients_.flush();
}

void MetricsLog::Format(const RoundReport& report, std::ostream& rounds_,
                        std::ostream& clients_) {
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
    clients_ << line.dump() << '\n';
    train_max = std::max(train_max, c.metrics.train_seconds());
    train_sum += c.metrics.train_seconds();
  }
  nlohmann::json line = {
      {"round", report.round},
      {"selected", report.selected},
      {"participants", report.participants},
      {"dropped", report.dropped},
      {"rejected", report.rejected},
      {"round_seconds", report.round_seconds},
      {"aggregation_seconds", report.aggregation_seconds},
      {"eval_seconds", report.eval_seconds},
      {"max_train_seconds", train_max},
      {"mean_train_seconds",
       report.clients.empty() ? 0.0 : train_sum / report.clients.size()},
  };
  if (report.eval) {
    line["test_accuracy"] = report.eval->accuracy;
    line["test_loss"] = report.eval->mean_loss;
  }
  rounds_ << line.dump() << '\n';
}

}  // namespace fedberry::server
