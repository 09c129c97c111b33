#include "apps/sim/sim_report.h"

#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/job_record.h"

namespace fedberry::sim {
namespace {

// `key`'s value as `format` says, or "-" when the line has none.
std::string Cell(const nlohmann::json& j, const char* key, const char* format) {
  if (!j.contains(key) || !j[key].is_number()) return "-";
  return absl::StrFormat(*absl::ParsedFormat<'f'>::New(format),
                         j[key].get<double>());
}

}  // namespace

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

double JsonNumber(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : -1;
}

std::string RoundFigures(const nlohmann::json& r) {
  std::vector<std::string> parts;
  for (const auto& [prefix, name] :
       {std::pair{"test_", "test"}, std::pair{"boards_eval_", "boards'"}}) {
    const std::string rmse = absl::StrCat(prefix, "rmse");
    const std::string accuracy = absl::StrCat(prefix, "accuracy");
    const std::string loss = absl::StrCat(prefix, "loss");
    if (r.contains(rmse)) {
      parts.push_back(absl::StrFormat("%s RMSE %.4f, loss %.4f", name,
                                      JsonNumber(r, rmse.c_str()),
                                      JsonNumber(r, loss.c_str())));
    } else if (r.contains(accuracy)) {
      parts.push_back(absl::StrFormat("%s accuracy %.4f, loss %.4f", name,
                                      JsonNumber(r, accuracy.c_str()),
                                      JsonNumber(r, loss.c_str())));
    }
  }
  return parts.empty() ? std::string("no evaluation")
                       : absl::StrJoin(parts, ", ");
}

void PrintRoundTable(const std::vector<nlohmann::json>& rounds) {
  // Regression jobs report RMSE where classification reports accuracy.
  bool regression = false, on_boards = false, private_job = false;
  for (const auto& r : rounds) {
    regression |= r.contains("test_rmse") || r.contains("boards_eval_rmse");
    on_boards |= r.contains("boards_eval_samples");
    private_job |= r.contains("dp_epsilon");
  }
  const char* figure = regression ? "test_rmse" : "test_accuracy";
  const char* boards_figure =
      regression ? "boards_eval_rmse" : "boards_eval_accuracy";
  // Overhead: what the round took beyond its slowest client's training and
  // the server's evaluation (RPCs, model transfer, aggregation, scheduling).
  // An evaluation marked * ran while the next round trained: not in round_s.
  std::printf("\n%-6s %-13s %-14s %-10s %-10s %-12s %-8s %-12s", "round",
              "participants", figure, "test_loss", "round_s", "max_train_s",
              "eval_s", "overhead_ms");
  if (on_boards) std::printf(" %-21s %-13s", boards_figure, "boards_eval_s");
  if (private_job) std::printf(" %-11s %-8s", "dp_epsilon", "clipped");
  std::printf("\n");
  bool any_overlapped = false;
  for (const auto& r : rounds) {
    const bool overlapped = r.contains("eval_overlapped") &&
                            r["eval_overlapped"].is_boolean() &&
                            r["eval_overlapped"].get<bool>();
    any_overlapped |= overlapped;
    const double overhead = JsonNumber(r, "round_seconds") -
                            JsonNumber(r, "max_train_seconds") -
                            (overlapped ? 0.0 : JsonNumber(r, "eval_seconds"));
    std::printf(
        "%-6d %-13s %-14s %-10s %-10.2f %-12.2f %-8s %-12.1f",
        static_cast<int>(JsonNumber(r, "round")),
        absl::StrFormat("%d/%d",
                        static_cast<int>(JsonNumber(r, "participants")),
                        static_cast<int>(JsonNumber(r, "selected")))
            .c_str(),
        Cell(r, figure, "%.4f").c_str(), Cell(r, "test_loss", "%.4f").c_str(),
        JsonNumber(r, "round_seconds"), JsonNumber(r, "max_train_seconds"),
        absl::StrFormat("%.2f%s", JsonNumber(r, "eval_seconds"),
                        overlapped ? "*" : "")
            .c_str(),
        overhead * 1000);
    if (on_boards) {
      std::printf(" %-21s %-13s", Cell(r, boards_figure, "%.4f").c_str(),
                  Cell(r, "boards_eval_seconds", "%.2f").c_str());
    }
    if (private_job) {
      std::printf(" %-11s %-8s", Cell(r, "dp_epsilon", "%.4f").c_str(),
                  Cell(r, "dp_clipped_fraction", "%.2f").c_str());
    }
    std::printf("\n");
  }
  if (any_overlapped) {
    std::printf(
        "* evaluated while the next round trained (fedberry-server "
        "--overlap_evaluation)\n");
  }
}

void PrintClientTable(const std::string& out) {
  auto record = fedberry::server::ReadJobRecord(out);
  if (!record.ok() || record->clients.empty()) return;
  auto opt = [](bool has, double v, const char* fmt) {
    return has ? absl::StrFormat(*absl::ParsedFormat<'f'>::New(fmt), v)
               : std::string("-");
  };
  std::printf("\n%-14s %-7s %-7s %-13s %-13s %-13s %-10s\n", "client", "rounds",
              "cpu_%", "peak_rss_MiB", "rpc_sent_MiB", "rpc_recv_MiB",
              "samples/s");
  for (const auto& s : fedberry::server::SummarizeClients(*record)) {
    const double mib = 1024.0 * 1024.0;
    std::printf("%-14s %-7d %-7s %-13s %-13s %-13s %-10s\n", s.client.c_str(),
                s.rounds,
                opt(s.mean_cpu_utilization.has_value(),
                    s.mean_cpu_utilization.value_or(0) * 100, "%.0f")
                    .c_str(),
                opt(s.peak_rss_bytes.has_value(),
                    s.peak_rss_bytes.value_or(0) / mib, "%.1f")
                    .c_str(),
                opt(s.rpc_sent_bytes.has_value(),
                    s.rpc_sent_bytes.value_or(0) / mib, "%.2f")
                    .c_str(),
                opt(s.rpc_received_bytes.has_value(),
                    s.rpc_received_bytes.value_or(0) / mib, "%.2f")
                    .c_str(),
                opt(s.mean_samples_per_second.has_value(),
                    s.mean_samples_per_second.value_or(0), "%.0f")
                    .c_str());
  }
}

}  // namespace fedberry::sim
