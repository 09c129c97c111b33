// A finished (or running) job's figures as read back from its output
// folder: rounds.jsonl and clients.jsonl, as MetricsLog writes them. Used by
// fedberry-report and fedberry-sim to draw the report and print tables.
// Readings absent from a line stay empty here.
// Thread-safety: plain data; ReadJobRecord is thread-safe.
#ifndef FEDBERRY_SERVER_JOB_RECORD_H_
#define FEDBERRY_SERVER_JOB_RECORD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::server {

struct RoundRow {
  int round = 0;
  int selected = 0;
  int participants = 0;
  int dropped = 0;
  int stragglers = 0;
  double round_seconds = 0;
  double elapsed_seconds = 0;  // job start to this round's close
  double aggregation_seconds = 0;
  double eval_seconds = 0;
  bool eval_overlapped = false;  // eval_seconds not within round_seconds
  double max_train_seconds = 0;
  std::optional<double> test_accuracy;
  std::optional<double> test_loss;
  std::optional<double> test_rmse;  // regression jobs
  std::optional<double> test_mae;
  // Why the round's result was refused and the model kept; empty: it was
  // published.
  std::string refused_result;
  // Evaluation on the boards (absent in rounds they did not evaluate):
  // the combined accuracy (or RMSE), its spread over the boards, and the
  // personalised figure.
  std::optional<double> boards_eval, boards_eval_min, boards_eval_max,
      boards_eval_personalized;
  // Differential privacy: epsilon spent so far (at dp_delta) and the share
  // of the round's updates clipped; absent without DP.
  std::optional<double> dp_epsilon, dp_delta, dp_clipped_fraction;
  // Secure aggregation: the session's boards at its start and those its
  // sum counts, and what the boards sent in it; absent without it.
  std::optional<int> secagg_started, secagg_survived;
  std::optional<double> secagg_bytes_up;
  // Asynchronous rounds: the buffer's updates and their staleness (versions
  // between pull and push); absent for synchronous rounds.
  std::optional<int> updates, staleness_max;
  std::optional<double> staleness_mean;
};

// One board's evaluation of a round's model (clients.jsonl "evaluation").
struct BoardEvalRow {
  int round = 0;
  std::string client;
  uint64_t samples = 0;
  double figure = 0;  // accuracy, or RMSE for regression
  std::optional<double> personalized;
};

struct ClientRow {
  int round = 0;
  std::string client;
  uint64_t num_samples = 0;
  double train_seconds = 0;
  double train_loss = 0;
  std::optional<double> client_wall_seconds, cpu_seconds, cpu_utilization,
      samples_per_second, paused_seconds;
  std::optional<uint64_t> rss_bytes, peak_rss_bytes, round_peak_rss_bytes,
      rpc_sent_bytes, rpc_received_bytes, interface_rx_bytes,
      interface_tx_bytes, watchdog_pauses;
};

// The board facts of a client, from its first line.
struct DeviceRow {
  std::string architecture, cpu_model, kernel, os, hostname;
  std::optional<uint64_t> cores, total_memory_bytes;
};

struct JobRecord {
  std::vector<RoundRow> rounds;              // in file order
  std::vector<ClientRow> clients;            // in file order
  std::vector<BoardEvalRow> board_evals;     // in file order
  bool regression = false;                   // figures are RMSE
  std::map<std::string, DeviceRow> devices;  // by client name
  std::vector<std::string> client_names;     // sorted
};

// One client's figures over the whole job. Means and totals cover the
// rounds that carried the reading; empty when none did.
struct ClientSummary {
  std::string client;
  int rounds = 0;
  double train_seconds = 0;
  std::optional<double> mean_cpu_utilization, mean_samples_per_second,
      paused_seconds;
  std::optional<uint64_t> peak_rss_bytes, rpc_sent_bytes, rpc_received_bytes,
      interface_rx_bytes, interface_tx_bytes, watchdog_pauses;
};

// Per-client summaries, in client_names order.
std::vector<ClientSummary> SummarizeClients(const JobRecord& record);

// Reads `dir`/rounds.jsonl and `dir`/clients.jsonl. NotFound when
// rounds.jsonl is missing; DataLoss naming file and line for a line that is
// not a JSON object (a torn last line of a crashed job is skipped).
absl::StatusOr<JobRecord> ReadJobRecord(const std::string& dir);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_JOB_RECORD_H_
