// fedberry-sim: a whole federation on this machine. Starts fedberry-server
// and N fedberry-emulated-client processes (fedberry-client with the test
// instruments --attack, --compute_slowdown, --data_fraction, --pause_every
// and --pause_seconds) on loopback, shows progress, and ends with a
// per-round table, each process's peak memory, a per-client resource table,
// and writes report.html into the output folder.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "runtime/command_line.h"
#include "runtime/image_dataset.h"
#include "runtime/shutdown_signal.h"
#include "server/html_report.h"
#include "server/job_record.h"
#include "sim/fleet_profile.h"
#include "sim/link_shaper.h"
#include "sim/local_pki.h"
#include "sim/process.h"
#include "sim/reserved_port.h"

ABSL_FLAG(int, clients, 4, "Number of client processes.");
ABSL_FLAG(bool, tls, false,
          "Mutual TLS: make a fleet CA, a server certificate and one board "
          "certificate per client in <output>/pki, and run every process "
          "with them.");
ABSL_FLAG(int, rounds, 5, "Number of federated rounds.");
ABSL_FLAG(double, fraction, 1.0, "Share of clients selected each round.");
ABSL_FLAG(int, min_clients, 0,
          "Minimum clients per round and to start (0: all --clients).");
ABSL_FLAG(int, local_epochs, 1, "Local epochs per round.");
ABSL_FLAG(int, local_steps, 0, "Local batches per round (0: whole epochs).");
ABSL_FLAG(int, batch_size, 32, "Local batch size.");
ABSL_FLAG(double, lr, 0.05, "Local learning rate.");
ABSL_FLAG(double, momentum, 0.9, "Local SGD momentum.");
// The training plan's flags, passed to fedberry-server as given (see its
// --help); empty: the server's default.
ABSL_FLAG(std::string, optimizer, "", "sgd, adam or adamw.");
ABSL_FLAG(std::string, loss, "",
          "cross_entropy, bce_with_logits, mse, l1, model.");
ABSL_FLAG(std::string, task, "", "classification or regression.");
ABSL_FLAG(std::string, weight_decay, "", "Local weight decay.");
ABSL_FLAG(std::string, input_shape, "", "One sample's shape, e.g. 3,32,32.");
ABSL_FLAG(std::string, num_outputs, "", "Model outputs (classes).");
ABSL_FLAG(std::string, input_mean, "", "Normalisation mean(s).");
ABSL_FLAG(std::string, input_std, "", "Normalisation deviation(s).");
ABSL_FLAG(std::string, label_column, "", "csv: the label's column.");
ABSL_FLAG(std::string, feature_columns, "", "csv: feature columns.");
ABSL_FLAG(bool, skip_bad_rows, false, "csv: skip malformed rows.");
ABSL_FLAG(bool, overlap_evaluation, true,
          "The server evaluates each round's model while the next round "
          "trains (fedberry-server --overlap_evaluation).");
// Aggregation and wire encodings, passed to fedberry-server as given (see
// fedberry-server --help); empty: the server's default.
ABSL_FLAG(std::string, strategy, "",
          "fedavg, fedprox, fedadam, fedyogi, fedadagrad, median, "
          "trimmed_mean, krum, multikrum.");
ABSL_FLAG(std::string, proximal_mu, "", "fedprox: mu.");
ABSL_FLAG(std::string, server_lr, "", "Server optimizers: step.");
ABSL_FLAG(std::string, metrics_listen, "",
          "The server's --metrics_listen: the live fleet page at / (and "
          "/api/fleet.json, /metrics) while the job runs, e.g. 9464 for "
          "http://localhost:9464/; empty: off.");
ABSL_FLAG(std::string, beta1, "", "Server optimizers: beta1.");
ABSL_FLAG(std::string, beta2, "", "Server optimizers: beta2.");
ABSL_FLAG(std::string, tau, "", "Server optimizers: tau.");
ABSL_FLAG(std::string, trim_fraction, "", "trimmed_mean: share trimmed.");
ABSL_FLAG(std::string, byzantine, "", "krum/multikrum: f.");
ABSL_FLAG(std::string, krum_keep, "", "multikrum: m.");
ABSL_FLAG(std::string, target_updates, "",
          "A round closes on its first K updates.");
ABSL_FLAG(std::string, over_select, "", "Over-selection factor, e.g. 1.3.");
ABSL_FLAG(std::string, quorum, "", "Quorum at the round deadline.");
ABSL_FLAG(std::string, mode, "",
          "sync or async (fedberry-server --mode): asynchronous buffered "
          "rounds, --rounds counting model versions.");
ABSL_FLAG(std::string, async_buffer, "",
          "--mode=async: updates per model version.");
ABSL_FLAG(std::string, staleness_weight, "",
          "--mode=async: polynomial or constant.");
ABSL_FLAG(std::string, max_staleness, "",
          "--mode=async: versions an update may lag.");
ABSL_FLAG(std::string, max_concurrency, "",
          "--mode=async: boards training at once.");
ABSL_FLAG(std::string, update_encoding, "", "raw, fp16, int8 or topk.");
ABSL_FLAG(std::string, topk_fraction, "", "topk: share of values sent.");
ABSL_FLAG(std::string, model_encoding, "", "raw or fp16.");
ABSL_FLAG(std::string, eval_data, "auto",
          "The server's evaluation data spec. auto: --data (for idx its "
          "test split; for csv and images the training data itself). "
          "Empty: no server-side evaluation (e.g. with "
          "--evaluate_on_boards).");
ABSL_FLAG(std::string, evaluate_on_boards, "",
          "The share of each board's samples held out for evaluation on the "
          "boards (fedberry-server --evaluate_on_boards).");
ABSL_FLAG(std::string, board_eval_every, "",
          "fedberry-server --board_eval_every.");
ABSL_FLAG(std::string, personalize_steps, "",
          "fedberry-server --personalize_steps.");
ABSL_FLAG(std::string, dp_noise_multiplier, "",
          "Differential privacy (fedberry-server --dp_noise_multiplier; "
          "--fraction is then each board's chance to join a round).");
ABSL_FLAG(std::string, dp_clip, "", "fedberry-server --dp_clip.");
ABSL_FLAG(std::string, dp_delta, "", "fedberry-server --dp_delta.");
ABSL_FLAG(std::string, dp_adaptive_clip, "",
          "fedberry-server --dp_adaptive_clip (true or false).");
ABSL_FLAG(std::string, dp_local, "",
          "fedberry-server --dp_local (true or false).");
ABSL_FLAG(std::string, dp_target_quantile, "",
          "fedberry-server --dp_target_quantile.");
ABSL_FLAG(std::string, dp_target_epsilon, "",
          "fedberry-server --dp_target_epsilon.");
ABSL_FLAG(std::string, dp_noise_seed, "",
          "fedberry-server --dp_noise_seed (tests only).");
ABSL_FLAG(std::string, trainable, "",
          "Train only the parameters whose whole name matches this regex "
          "(the server's --trainable, e.g. 'fc.*'); empty: all.");
ABSL_FLAG(absl::Duration, round_deadline, absl::Minutes(10), "Round deadline.");
ABSL_FLAG(std::string, model, "lenet5",
          "A built-in model (lenet5, resnet8, mlp, wide-mlp, tabular-mlp) or "
          "a TorchScript file.");
ABSL_FLAG(std::string, data, fedberry::runtime::kDefaultFashionMnistDir,
          "Fashion-MNIST folder (train and t10k IDX files).");
ABSL_FLAG(std::string, partition, "iid", "Split: iid or dirichlet.");
ABSL_FLAG(double, alpha, 0.5, "Dirichlet concentration.");
ABSL_FLAG(uint64_t, seed, 1, "Job seed.");
ABSL_FLAG(int, threads_per_client, 1, "LibTorch threads per client.");
ABSL_FLAG(std::string, output, "fedberry-sim-out",
          "Output folder (metrics, logs, final model).");
ABSL_FLAG(
    bool, resume, false,
    "Continue the job checkpointed in --output instead of starting over.");
ABSL_FLAG(int, checkpoint_every_batches, 100,
          "Client checkpoint interval in batches.");
ABSL_FLAG(std::string, planner, "uniform",
          "Work planner of the server: uniform, greedy or ilp.");
ABSL_FLAG(double, planner_max_factor, 4.0,
          "Most work of a planned client, as a multiple of the uniform share.");
ABSL_FLAG(int, attackers, 0,
          "Test only, to measure robust aggregation: the first K clients send "
          "poisoned updates as --attack says.");
ABSL_FLAG(std::string, attack, "scale:10",
          "The attackers' --attack (fedberry-emulated-client): scale:F, "
          "signflip or signflip:F.");
ABSL_FLAG(bool, data_moves, false,
          "Trusted-cluster mode: the server (greedy or ilp planner, "
          "--local_steps=0) may move training samples between the clients, "
          "which all allow it.");
ABSL_FLAG(std::string, fleet_profile, "",
          "Emulate a heterogeneous fleet: a file with one line per client of "
          "data_fraction=F compute_slowdown=K bandwidth_mbit=B pause_every=N "
          "pause_seconds=S (see docs/guide/planners.md and "
          "docs/guide/async.md); sets the number of clients. Empty: "
          "identical clients.");
ABSL_FLAG(int, tiers, 1,
          "1: the clients join the server. 2: they join --gateways site "
          "gateways (fedberry-server --upstream), which join the server as "
          "one weighted board each.");
ABSL_FLAG(int, gateways, 2, "Site gateways with --tiers=2.");
ABSL_FLAG(std::string, site_mode, "",
          "--tiers=2: sync or async, the site gateways' own rounds "
          "(fedberry-server --mode on each gateway; the server's is --mode).");
ABSL_FLAG(std::string, site_async_buffer, "",
          "--site_mode=async: board updates each gateway folds into the one "
          "it sends its parent (the gateways' --async_buffer).");
ABSL_FLAG(std::string, bin_dir, "",
          "Folder of fedberry-server and fedberry-emulated-client (default: "
          "this program's folder).");

namespace fs = std::filesystem;
using fedberry::sim::Process;

namespace {

std::string BinDir() {
  if (!absl::GetFlag(FLAGS_bin_dir).empty())
    return absl::GetFlag(FLAGS_bin_dir);
  return fs::read_symlink("/proc/self/exe").parent_path().string();
}

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

double Num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : -1;
}

// A round's evaluation figures: "test accuracy 0.8123, loss 0.5310" (or
// RMSE), then "boards' accuracy 0.8011" when the boards evaluated it.
std::string Figures(const nlohmann::json& r) {
  std::vector<std::string> parts;
  for (const auto& [prefix, name] :
       {std::pair{"test_", "test"}, std::pair{"boards_eval_", "boards'"}}) {
    const std::string rmse = absl::StrCat(prefix, "rmse");
    const std::string accuracy = absl::StrCat(prefix, "accuracy");
    const std::string loss = absl::StrCat(prefix, "loss");
    if (r.contains(rmse)) {
      parts.push_back(absl::StrFormat("%s RMSE %.4f, loss %.4f", name,
                                      Num(r, rmse.c_str()),
                                      Num(r, loss.c_str())));
    } else if (r.contains(accuracy)) {
      parts.push_back(absl::StrFormat("%s accuracy %.4f, loss %.4f", name,
                                      Num(r, accuracy.c_str()),
                                      Num(r, loss.c_str())));
    }
  }
  return parts.empty() ? std::string("no evaluation")
                       : absl::StrJoin(parts, ", ");
}

// `key`'s value as `format` says, or "-" when the line has none.
std::string Cell(const nlohmann::json& j, const char* key, const char* format) {
  if (!j.contains(key) || !j[key].is_number()) return "-";
  return absl::StrFormat(*absl::ParsedFormat<'f'>::New(format),
                         j[key].get<double>());
}

void PrintTable(const std::vector<nlohmann::json>& rounds) {
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
    const double overhead = Num(r, "round_seconds") -
                            Num(r, "max_train_seconds") -
                            (overlapped ? 0.0 : Num(r, "eval_seconds"));
    std::printf(
        "%-6d %-13s %-14s %-10s %-10.2f %-12.2f %-8s %-12.1f",
        static_cast<int>(Num(r, "round")),
        absl::StrFormat("%d/%d", static_cast<int>(Num(r, "participants")),
                        static_cast<int>(Num(r, "selected")))
            .c_str(),
        Cell(r, figure, "%.4f").c_str(), Cell(r, "test_loss", "%.4f").c_str(),
        Num(r, "round_seconds"), Num(r, "max_train_seconds"),
        absl::StrFormat("%.2f%s", Num(r, "eval_seconds"), overlapped ? "*" : "")
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

// Per client over the job: mean CPU, peak RSS, RPC bytes, throughput, as
// the clients measured them ("-": a reading the board could not take).
void PrintResourceTable(const std::string& out) {
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

// Appends --name=value for each value given (empty: the child's default).
void AddFlags(std::vector<std::string>& argv,
              const std::vector<std::pair<const char*, std::string>>& flags) {
  for (const auto& [name, value] : flags) {
    if (!value.empty()) argv.push_back(absl::StrCat("--", name, "=", value));
  }
}

// procs: the server, then `gateways` site gateways, then the clients
// (client i joins gateway i % gateways). Signals what a server that has
// just ended leaves behind: its boards, which would only retry, and its
// site gateways only when it failed (after a clean end they tell their own
// boards, which may be mid-task, and end).
void StopOrphans(std::vector<Process>& procs, int gateways,
                 std::vector<bool>& ended) {
  const auto server_of = [gateways](size_t k) -> size_t {
    if (k <= static_cast<size_t>(gateways)) return 0;  // the server, gateways
    return gateways > 0 ? 1 + (k - 1 - gateways) % gateways : 0;
  };
  for (size_t s = 0; s <= static_cast<size_t>(gateways); ++s) {
    if (ended[s] || !procs[s].exit()) continue;
    ended[s] = true;
    const bool failed = procs[s].exit()->code != 0;
    for (size_t k = 1; k < procs.size(); ++k) {
      const bool gateway = k <= static_cast<size_t>(gateways);
      if (server_of(k) == s && (!gateway || failed)) procs[k].Signal(SIGTERM);
    }
  }
}

int Run() {
  std::vector<fedberry::sim::BoardProfile> fleet;
  if (!absl::GetFlag(FLAGS_fleet_profile).empty()) {
    auto loaded =
        fedberry::sim::LoadFleetProfile(absl::GetFlag(FLAGS_fleet_profile));
    if (!loaded.ok()) {
      std::fprintf(stderr, "fedberry-sim: %s\n",
                   std::string(loaded.status().message()).c_str());
      return 2;
    }
    fleet = *std::move(loaded);
  }
  bool shaped = false;
  for (const auto& b : fleet) shaped |= b.bandwidth_mbit > 0;
  const int n = fleet.empty() ? absl::GetFlag(FLAGS_clients)
                              : static_cast<int>(fleet.size());
  const int rounds = absl::GetFlag(FLAGS_rounds);
  if (n < 1 || rounds < 1) {
    std::fprintf(stderr, "fedberry-sim: --clients and --rounds must be >= 1\n");
    return 2;
  }
  const int attackers = absl::GetFlag(FLAGS_attackers);
  if (attackers < 0 || attackers > n) {
    std::fprintf(stderr,
                 "fedberry-sim: --attackers must be between 0 and the number "
                 "of clients (%d)\n",
                 n);
    return 2;
  }
  const int tiers = absl::GetFlag(FLAGS_tiers);
  const int gateways = tiers == 2 ? absl::GetFlag(FLAGS_gateways) : 0;
  if (tiers < 1 || tiers > 2 ||
      (tiers == 2 && (gateways < 1 || gateways > n))) {
    std::fprintf(stderr,
                 "fedberry-sim: --tiers is 1 or 2, and --gateways between 1 "
                 "and the number of clients (%d)\n",
                 n);
    return 2;
  }
  if (tiers == 1 && (!absl::GetFlag(FLAGS_site_mode).empty() ||
                     !absl::GetFlag(FLAGS_site_async_buffer).empty())) {
    std::fprintf(stderr,
                 "fedberry-sim: --site_mode and --site_async_buffer set the "
                 "site gateways' rounds: they need --tiers=2\n");
    return 2;
  }
  if (tiers == 2 && (absl::GetFlag(FLAGS_tls) || !fleet.empty())) {
    std::fprintf(stderr,
                 "fedberry-sim: --tiers=2 runs on loopback without TLS or a "
                 "fleet profile\n");
    return 2;
  }
  // With gateways the server's boards are the gateways; each gateway waits
  // for all of its own clients.
  const int min_clients = gateways > 0 ? gateways
                          : absl::GetFlag(FLAGS_min_clients) > 0
                              ? absl::GetFlag(FLAGS_min_clients)
                              : n;
  const std::string out = absl::GetFlag(FLAGS_output);
  const std::string bin = BinDir();
  std::error_code ec;
  fs::remove(out + "/rounds.jsonl", ec);
  fs::remove(out + "/clients.jsonl", ec);
  fs::remove(out + "/server.addr", ec);
  if (!absl::GetFlag(FLAGS_resume)) {
    fs::remove_all(out + "/checkpoints", ec);
    fs::remove_all(out + "/client-checkpoints", ec);
  }
  fs::remove(out + "/report.html", ec);
  for (int g = 0; g < gateways; ++g) {
    const std::string dir = absl::StrCat(out, "/gateway-", g);
    fs::remove(dir + "/server.addr", ec);
    fs::remove(dir + "/rounds.jsonl", ec);
    fs::remove(dir + "/clients.jsonl", ec);
    if (!absl::GetFlag(FLAGS_resume)) fs::remove_all(dir + "/checkpoints", ec);
    fs::create_directories(dir, ec);
  }
  fs::create_directories(out + "/logs", ec);
  if (ec) {
    std::fprintf(stderr, "fedberry-sim: cannot create %s/logs: %s\n",
                 out.c_str(), ec.message().c_str());
    return 2;
  }
  const absl::Time start = absl::Now();
  std::vector<Process> procs;
  std::vector<std::string> names;  // of procs, for the table
  std::atomic<bool> interrupted{false};
  fedberry::ShutdownSignal signal([&](int) { interrupted = true; });

  std::optional<fedberry::sim::LocalPki> pki;
  if (absl::GetFlag(FLAGS_tls)) {
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.push_back(absl::StrCat("sim-client-", i));
    auto made = fedberry::sim::MakeLocalPki(out + "/pki", names);
    if (!made.ok()) {
      std::fprintf(stderr, "fedberry-sim: %s\n",
                   std::string(made.status().message()).c_str());
      return 2;
    }
    pki = *std::move(made);
    std::printf("fedberry-sim: mutual TLS with fresh certificates in %s/pki\n",
                out.c_str());
  }
  // Every server's port is chosen now, so that all processes start at
  // once: boards load LibTorch and their data while the servers load.
  // Shaped clients reach the server over their veth, not loopback.
  auto server_port =
      fedberry::sim::ReservedPort::On(shaped ? "0.0.0.0" : "127.0.0.1");
  std::vector<fedberry::sim::ReservedPort> gateway_ports;
  for (int g = 0; g < gateways && server_port.ok(); ++g) {
    auto reserved = fedberry::sim::ReservedPort::On("127.0.0.1");
    if (!reserved.ok()) {
      server_port = reserved.status();
      break;
    }
    gateway_ports.push_back(*std::move(reserved));
  }
  if (!server_port.ok()) {
    std::fprintf(stderr, "fedberry-sim: %s\n",
                 std::string(server_port.status().message()).c_str());
    return 2;
  }
  std::vector<std::string> server_argv = {
      bin + "/fedberry-server",
      absl::StrCat(
          "--listen=", shaped ? "0.0.0.0:" : "127.0.0.1:", server_port->port()),
      absl::StrCat("--output=", out),
      absl::StrCat("--rounds=", rounds),
      absl::StrCat("--fraction=", absl::GetFlag(FLAGS_fraction)),
      absl::StrCat("--min_clients=", min_clients),
      absl::StrCat("--min_clients_to_start=", min_clients),
      absl::StrCat("--local_epochs=", absl::GetFlag(FLAGS_local_epochs)),
      absl::StrCat("--local_steps=", absl::GetFlag(FLAGS_local_steps)),
      absl::StrCat("--batch_size=", absl::GetFlag(FLAGS_batch_size)),
      absl::StrCat("--lr=", absl::GetFlag(FLAGS_lr)),
      absl::StrCat("--momentum=", absl::GetFlag(FLAGS_momentum)),
      absl::StrCat("--round_deadline=",
                   absl::FormatDuration(absl::GetFlag(FLAGS_round_deadline))),
      absl::StrCat("--model=", absl::GetFlag(FLAGS_model)),
      absl::StrCat("--eval_data=", absl::GetFlag(FLAGS_eval_data) == "auto"
                                       ? absl::GetFlag(FLAGS_data)
                                       : absl::GetFlag(FLAGS_eval_data)),
      absl::StrCat("--seed=", absl::GetFlag(FLAGS_seed)),
      absl::StrCat("--threads=",
                   std::max(1, absl::GetFlag(FLAGS_threads_per_client))),
      absl::StrCat("--planner=", absl::GetFlag(FLAGS_planner)),
      absl::StrCat("--planner_max_factor=",
                   absl::GetFlag(FLAGS_planner_max_factor)),
      absl::StrCat("--data_moves=", absl::GetFlag(FLAGS_data_moves)),
      absl::StrCat("--overlap_evaluation=",
                   absl::GetFlag(FLAGS_overlap_evaluation)),
  };
  AddFlags(server_argv,
           {{"optimizer", absl::GetFlag(FLAGS_optimizer)},
            {"loss", absl::GetFlag(FLAGS_loss)},
            {"task", absl::GetFlag(FLAGS_task)},
            {"weight_decay", absl::GetFlag(FLAGS_weight_decay)},
            {"input_shape", absl::GetFlag(FLAGS_input_shape)},
            {"num_outputs", absl::GetFlag(FLAGS_num_outputs)},
            {"input_mean", absl::GetFlag(FLAGS_input_mean)},
            {"input_std", absl::GetFlag(FLAGS_input_std)},
            {"label_column", absl::GetFlag(FLAGS_label_column)},
            {"feature_columns", absl::GetFlag(FLAGS_feature_columns)},
            {"strategy", absl::GetFlag(FLAGS_strategy)},
            {"proximal_mu", absl::GetFlag(FLAGS_proximal_mu)},
            {"server_lr", absl::GetFlag(FLAGS_server_lr)},
            {"beta1", absl::GetFlag(FLAGS_beta1)},
            {"beta2", absl::GetFlag(FLAGS_beta2)},
            {"tau", absl::GetFlag(FLAGS_tau)},
            {"trim_fraction", absl::GetFlag(FLAGS_trim_fraction)},
            {"byzantine", absl::GetFlag(FLAGS_byzantine)},
            {"krum_keep", absl::GetFlag(FLAGS_krum_keep)},
            {"target_updates", absl::GetFlag(FLAGS_target_updates)},
            {"over_select", absl::GetFlag(FLAGS_over_select)},
            {"quorum", absl::GetFlag(FLAGS_quorum)},
            {"mode", absl::GetFlag(FLAGS_mode)},
            {"async_buffer", absl::GetFlag(FLAGS_async_buffer)},
            {"staleness_weight", absl::GetFlag(FLAGS_staleness_weight)},
            {"max_staleness", absl::GetFlag(FLAGS_max_staleness)},
            {"max_concurrency", absl::GetFlag(FLAGS_max_concurrency)},
            {"update_encoding", absl::GetFlag(FLAGS_update_encoding)},
            {"topk_fraction", absl::GetFlag(FLAGS_topk_fraction)},
            {"model_encoding", absl::GetFlag(FLAGS_model_encoding)},
            {"evaluate_on_boards", absl::GetFlag(FLAGS_evaluate_on_boards)},
            {"board_eval_every", absl::GetFlag(FLAGS_board_eval_every)},
            {"personalize_steps", absl::GetFlag(FLAGS_personalize_steps)},
            {"dp_noise_multiplier", absl::GetFlag(FLAGS_dp_noise_multiplier)},
            {"dp_clip", absl::GetFlag(FLAGS_dp_clip)},
            {"dp_delta", absl::GetFlag(FLAGS_dp_delta)},
            {"dp_adaptive_clip", absl::GetFlag(FLAGS_dp_adaptive_clip)},
            {"dp_target_quantile", absl::GetFlag(FLAGS_dp_target_quantile)},
            {"dp_local", absl::GetFlag(FLAGS_dp_local)},
            {"dp_target_epsilon", absl::GetFlag(FLAGS_dp_target_epsilon)},
            {"dp_noise_seed", absl::GetFlag(FLAGS_dp_noise_seed)},
            {"trainable", absl::GetFlag(FLAGS_trainable)},
            {"metrics_listen", absl::GetFlag(FLAGS_metrics_listen)}});
  if (absl::GetFlag(FLAGS_skip_bad_rows)) {
    server_argv.push_back("--skip_bad_rows");
  }
  if (pki) {
    server_argv.push_back(absl::StrCat("--tls_cert=", pki->server_cert));
    server_argv.push_back(absl::StrCat("--tls_key=", pki->server_key));
    server_argv.push_back(absl::StrCat("--client_ca=", pki->ca_cert));
  } else if (shaped) {
    // Shaped clients dial a veth address, not loopback.
    server_argv.push_back("--insecure");
  }
  // Starts a process of the federation, logging to logs/NAME.log; on
  // failure says why and stops those already started.
  const auto launch = [&](const std::vector<std::string>& argv,
                          const std::string& name) {
    auto p = Process::Spawn(argv, absl::StrCat(out, "/logs/", name, ".log"));
    if (!p.ok()) {
      std::fprintf(stderr, "fedberry-sim: %s\n",
                   std::string(p.status().message()).c_str());
      for (auto& q : procs) q.Signal(SIGTERM);
      return false;
    }
    procs.push_back(*p);
    names.push_back(name);
    return true;
  };
  if (!launch(server_argv, "server")) return 2;
  std::printf("fedberry-sim: server started (log %s/logs/server.log)\n",
              out.c_str());

  // Tiers: each gateway takes the server's plan, then listens for its own
  // clients (client i joins gateway i % gateways).
  const std::string upstream = absl::StrCat("127.0.0.1:", server_port->port());
  // Under DP a gateway draws its boards with the root's q: a draw of any
  // size runs (a smaller one than --min_clients would be forwarded empty).
  const bool dp = !absl::GetFlag(FLAGS_dp_noise_multiplier).empty();
  for (int g = 0; g < gateways; ++g) {
    const int boards = n / gateways + (g < n % gateways ? 1 : 0);
    const std::string dir = absl::StrCat(out, "/gateway-", g);
    const std::string name = absl::StrCat("gateway-", g);
    std::vector<std::string> argv = {
        bin + "/fedberry-server",
        absl::StrCat("--upstream=", upstream),
        absl::StrCat("--upstream_name=sim-gateway-", g),
        absl::StrCat("--listen=127.0.0.1:", gateway_ports[g].port()),
        absl::StrCat("--output=", dir),
        absl::StrCat("--min_clients=", dp ? 1 : boards),
        absl::StrCat("--min_clients_to_start=", boards),
        absl::StrCat("--round_deadline=",
                     absl::FormatDuration(absl::GetFlag(FLAGS_round_deadline))),
        absl::StrCat("--seed=", absl::GetFlag(FLAGS_seed)),
        "--eval_data="};
    AddFlags(argv, {{"mode", absl::GetFlag(FLAGS_site_mode)},
                    {"async_buffer", absl::GetFlag(FLAGS_site_async_buffer)}});
    if (!launch(argv, name)) return 2;
    std::printf(
        "fedberry-sim: %s on 127.0.0.1:%d for %d clients (log "
        "%s/logs/%s.log)\n",
        name.c_str(), gateway_ports[g].port(), boards, out.c_str(),
        name.c_str());
  }
  std::unique_ptr<fedberry::sim::LinkShaper> shaper;
  if (shaped) {
    shaper =
        std::make_unique<fedberry::sim::LinkShaper>(out + "/logs/netns.log");
  }
  for (int i = 0; i < n; ++i) {
    const int port =
        gateways > 0 ? gateway_ports[i % gateways].port() : server_port->port();
    std::optional<fedberry::sim::ShapedLink> link;
    if (shaper && fleet[i].bandwidth_mbit > 0) {
      auto added = shaper->Add(i, fleet[i].bandwidth_mbit);
      if (!added.ok()) {
        std::fprintf(stderr,
                     "fedberry-sim: cannot shape client-%d's link: %s\n", i,
                     std::string(added.status().message()).c_str());
        for (auto& q : procs) q.Signal(SIGTERM);
        return 2;
      }
      link = *added;
      std::printf(
          "fedberry-sim: client-%d in network namespace %s, %g Mbit/s "
          "each way (tc tbf)\n",
          i, link->netns.c_str(), fleet[i].bandwidth_mbit);
    }
    std::vector<std::string> argv = {
        bin + "/fedberry-emulated-client",
        absl::StrCat("--server=",
                     link ? absl::StrCat(link->host_address, ":", port)
                          : absl::StrCat("127.0.0.1:", port)),
        absl::StrCat("--data=", absl::GetFlag(FLAGS_data)),
        absl::StrCat("--partition_index=", i),
        absl::StrCat("--partition_count=", n),
        absl::StrCat("--partition=", absl::GetFlag(FLAGS_partition)),
        absl::StrCat("--alpha=", absl::GetFlag(FLAGS_alpha)),
        absl::StrCat("--threads=", absl::GetFlag(FLAGS_threads_per_client)),
        absl::StrCat("--name=sim-client-", i),
        "--give_up_after=60s",
        // Started with its server: dials once the server listens.
        absl::StrCat("--server_ready_file=", out,
                     gateways > 0 ? absl::StrCat("/gateway-", i % gateways)
                                  : std::string(),
                     "/server.addr"),
        absl::StrCat("--checkpoint_dir=", out, "/client-checkpoints/client-",
                     i),
        absl::StrCat("--checkpoint_every_batches=",
                     absl::GetFlag(FLAGS_checkpoint_every_batches)),
    };
    if (absl::GetFlag(FLAGS_data_moves)) {
      argv.push_back("--allow_data_moves");
    }
    if (absl::GetFlag(FLAGS_skip_bad_rows)) argv.push_back("--skip_bad_rows");
    if (i < attackers) {
      argv.push_back(absl::StrCat("--attack=", absl::GetFlag(FLAGS_attack)));
    }
    if (pki) {
      argv.push_back(absl::StrCat("--tls_ca=", pki->ca_cert));
      argv.push_back(absl::StrCat("--tls_cert=", pki->board_certs[i]));
      argv.push_back(absl::StrCat("--tls_key=", pki->board_keys[i]));
      argv.push_back(absl::StrCat("--tls_server_name=", pki->server_name));
    } else if (link) {
      argv.push_back("--insecure");
    }
    if (!fleet.empty()) {
      argv.push_back(absl::StrCat("--data_fraction=", fleet[i].data_fraction));
      argv.push_back(
          absl::StrCat("--compute_slowdown=", fleet[i].compute_slowdown));
      if (fleet[i].pause_every > 0) {
        argv.push_back(absl::StrCat("--pause_every=", fleet[i].pause_every));
        argv.push_back(
            absl::StrCat("--pause_seconds=", fleet[i].pause_seconds));
      }
    }
    if (link) argv = shaper->Wrap(*link, argv);
    if (!launch(argv, absl::StrCat("client-", i))) return 2;
  }
  // A server writes its bound address once it listens; one that exits
  // first stops the federation.
  const auto listening = [&](const std::string& dir, size_t index,
                             const std::string& name) {
    while (true) {
      std::string address;
      std::ifstream f(dir + "/server.addr");
      std::getline(f, address);
      if (!address.empty()) return true;
      if (procs[index].Poll() || interrupted) {
        std::fprintf(stderr,
                     "fedberry-sim: the %s exited before listening; see "
                     "%s/logs/%s.log\n",
                     name.c_str(), out.c_str(), name.c_str());
        for (auto& q : procs) q.Signal(SIGTERM);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  if (!listening(out, 0, "server")) return 1;
  for (int g = 0; g < gateways; ++g) {
    if (!listening(absl::StrCat(out, "/gateway-", g), 1 + g,
                   absl::StrCat("gateway-", g))) {
      return 1;
    }
  }
  const std::string address =
      absl::StrCat(shaped ? "0.0.0.0:" : "127.0.0.1:", server_port->port());
  std::printf("fedberry-sim: %d clients on %s%s, %d rounds of %s, planner %s\n",
              n, address.c_str(),
              gateways > 0
                  ? absl::StrCat(" through ", gateways, " gateways").c_str()
                  : "",
              rounds, absl::GetFlag(FLAGS_model).c_str(),
              absl::GetFlag(FLAGS_planner).c_str());
  for (size_t i = 0; i < fleet.size(); ++i) {
    std::printf(
        "fedberry-sim: client-%zu data_fraction %g compute_slowdown "
        "%g%s\n",
        i, fleet[i].data_fraction, fleet[i].compute_slowdown,
        fleet[i].pause_every > 0
            ? absl::StrFormat(", pauses %g s every %d task(s)",
                              fleet[i].pause_seconds, fleet[i].pause_every)
                  .c_str()
            : "");
  }
  std::fflush(stdout);

  size_t shown = 0;
  absl::Time last_note = absl::Now();
  bool signalled = false;
  std::vector<bool> ended(procs.size(), false);
  while (true) {
    if (interrupted && !signalled) {
      std::printf("fedberry-sim: interrupted; stopping the federation\n");
      for (auto& p : procs) p.Signal(SIGTERM);
      signalled = true;
    }
    auto lines = ReadLines(out + "/rounds.jsonl");
    for (; shown < lines.size(); ++shown) {
      const auto& r = lines[shown];
      std::printf("[%6.1fs] round %d/%d: %d/%d clients, %s, round %.2f s\n",
                  absl::ToDoubleSeconds(absl::Now() - start),
                  static_cast<int>(Num(r, "round")), rounds,
                  static_cast<int>(Num(r, "participants")),
                  static_cast<int>(Num(r, "selected")), Figures(r).c_str(),
                  Num(r, "round_seconds"));
      std::fflush(stdout);
      last_note = absl::Now();
    }
    bool all_done = true;
    for (auto& p : procs) all_done &= p.Poll().has_value();
    if (all_done) break;
    StopOrphans(procs, gateways, ended);
    if (absl::Now() - last_note > absl::Seconds(10)) {
      std::printf("[%6.1fs] round %zu/%d in progress\n",
                  absl::ToDoubleSeconds(absl::Now() - start), shown + 1,
                  rounds);
      std::fflush(stdout);
      last_note = absl::Now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double wall = absl::ToDoubleSeconds(absl::Now() - start);
  if (shaper) shaper->Teardown();  // the namespaces and their veth pairs
  auto lines = ReadLines(out + "/rounds.jsonl");
  PrintTable(lines);
  std::printf("\n%-10s %-10s %-14s\n", "process", "exit", "peak_rss_MiB");
  int failures = 0;
  for (size_t i = 0; i < procs.size(); ++i) {
    const auto& e = *procs[i].exit();
    std::printf("%-10s %-10d %-14.1f\n", names[i].c_str(), e.code,
                e.max_rss_kib / 1024.0);
    failures += e.code != 0;
  }
  PrintResourceTable(out);
  const std::string report = out + "/report.html";
  if (absl::Status s = fedberry::server::WriteHtmlReport(out, report); s.ok()) {
    std::printf("\nfedberry-sim: report in %s\n", report.c_str());
  } else {
    std::fprintf(stderr, "fedberry-sim: no report: %s\n",
                 std::string(s.message()).c_str());
  }
  std::printf(
      "\nfedberry-sim: %zu/%d rounds, final %s, wall time %.1f s, output in "
      "%s\n",
      lines.size(), rounds,
      lines.empty() ? "no figures" : Figures(lines.back()).c_str(), wall,
      out.c_str());
  if (failures > 0 || static_cast<int>(lines.size()) != rounds) {
    std::fprintf(stderr,
                 "fedberry-sim: the job did not complete cleanly (%d process "
                 "failures); see %s/logs/\n",
                 failures, out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fedberry::ParseCommandLine(
      argc, argv,
      "fedberry simulator: runs a server and N clients on loopback on "
      "Fashion-MNIST and prints a per-round table.\nUsage: fedberry-sim "
      "--clients=4 --rounds=5 --output=out\n"
      "       fedberry-sim --tiers=2 --gateways=2 --clients=4   (boards join "
      "site gateways, which join the server)",
      "sim_main");
  return Run();
}
