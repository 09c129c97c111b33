// fedberry-sim's own flags; sim_flags.h says how they are read. The
// server's flags it passes through (--strategy, --dp_*, ...) are the
// server's own definitions (the shared rows of its flag table,
// apps/server/server_flags.inc), linked in.
#include "apps/sim/sim_flags.h"

#include <filesystem>
#include <string>
#include <tuple>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apps/server/server_flags_shared.h"
#include "runtime/image_dataset.h"
#include "runtime/partition.h"
#include "runtime/watchdog.h"

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
ABSL_FLAG(bool, skip_bad_rows, false, "csv: skip malformed rows.");
ABSL_FLAG(bool, overlap_evaluation, true,
          "The server evaluates each round's model while the next round "
          "trains (fedberry-server --overlap_evaluation).");
ABSL_FLAG(std::string, eval_data, "auto",
          "The server's evaluation data spec. auto: --data (for idx its "
          "test split; for csv and images the training data itself). "
          "Empty: no server-side evaluation (e.g. with "
          "--evaluate_on_boards).");
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
ABSL_FLAG(std::string, board_rss_budget, "150MiB",
          "Each board's memory budget (peak RSS, e.g. 150MiB, 1GiB): the "
          "closing table flags a board process above it.");
ABSL_FLAG(std::string, server_rss_budget, "170MiB",
          "The server's and each gateway's memory budget (peak RSS): the "
          "closing table flags one above it.");
ABSL_FLAG(std::string, bin_dir, "",
          "Folder of fedberry-server and fedberry-emulated-client (default: "
          "this program's folder).");

namespace fedberry::sim {
namespace {

SimJob JobFromFlags() {
  SimJob job;
  job.rounds = absl::GetFlag(FLAGS_rounds);
  job.fraction = absl::GetFlag(FLAGS_fraction);
  job.min_clients = absl::GetFlag(FLAGS_min_clients);
  job.local_epochs = absl::GetFlag(FLAGS_local_epochs);
  job.local_steps = absl::GetFlag(FLAGS_local_steps);
  job.batch_size = absl::GetFlag(FLAGS_batch_size);
  job.lr = absl::GetFlag(FLAGS_lr);
  job.momentum = absl::GetFlag(FLAGS_momentum);
  job.round_deadline = absl::GetFlag(FLAGS_round_deadline);
  job.model = absl::GetFlag(FLAGS_model);
  job.data = absl::GetFlag(FLAGS_data);
  job.eval_data = absl::GetFlag(FLAGS_eval_data);
  job.alpha = absl::GetFlag(FLAGS_alpha);
  job.seed = absl::GetFlag(FLAGS_seed);
  job.planner = absl::GetFlag(FLAGS_planner);
  job.planner_max_factor = absl::GetFlag(FLAGS_planner_max_factor);
  job.data_moves = absl::GetFlag(FLAGS_data_moves);
  job.overlap_evaluation = absl::GetFlag(FLAGS_overlap_evaluation);
  job.skip_bad_rows = absl::GetFlag(FLAGS_skip_bad_rows);
  job.resume = absl::GetFlag(FLAGS_resume);
  return job;
}

// The flags whose text is parsed: the split and the gateways' rounds.
absl::Status ReadParsedFlags(SimPlan& plan) {
  auto partition = runtime::ParsePartitionKind(absl::GetFlag(FLAGS_partition));
  if (!partition.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--partition: ", partition.status().message()));
  }
  plan.job.partition = *partition;
  const std::string mode = absl::GetFlag(FLAGS_site_mode);
  const std::string buffer = absl::GetFlag(FLAGS_site_async_buffer);
  if (mode.empty() && buffer.empty()) return absl::OkStatus();
  apps::ModeConfig& site = plan.tiers.site.emplace();
  if (!mode.empty()) site.mode = mode;
  if (!buffer.empty() && !absl::SimpleAtoi(buffer, &site.async_buffer)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--site_async_buffer=", buffer, " is not a whole number"));
  }
  return absl::OkStatus();
}

// The boards; a fleet profile is read here, as it sets their number.
absl::Status ReadFleetFlags(SimFleet& fleet) {
  fleet.clients = absl::GetFlag(FLAGS_clients);
  fleet.profile_path = absl::GetFlag(FLAGS_fleet_profile);
  if (!fleet.profile_path.empty()) {
    auto loaded = LoadFleetProfile(fleet.profile_path);
    if (!loaded.ok()) return loaded.status();
    fleet.boards = *std::move(loaded);
  }
  fleet.threads_per_client = absl::GetFlag(FLAGS_threads_per_client);
  fleet.checkpoint_every_batches =
      absl::GetFlag(FLAGS_checkpoint_every_batches);
  fleet.attackers = absl::GetFlag(FLAGS_attackers);
  fleet.attack = absl::GetFlag(FLAGS_attack);
  for (const auto& [flag, value, bytes] :
       {std::tuple{"--board_rss_budget", absl::GetFlag(FLAGS_board_rss_budget),
                   &fleet.board_rss_budget},
        std::tuple{"--server_rss_budget",
                   absl::GetFlag(FLAGS_server_rss_budget),
                   &fleet.server_rss_budget}}) {
    absl::StatusOr<runtime::MemoryLevel> level =
        runtime::ParseMemoryLevel(value);
    if (!level.ok() || !level->bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, "=", value, " is not a size (e.g. 150MiB, 1GiB)"));
    }
    *bytes = *level->bytes;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SimPlan> SimPlanFromFlags() {
  SimPlan plan;
  plan.job = JobFromFlags();
  if (absl::Status s = apps::ReadSharedServerFlags(plan.server); !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadFleetFlags(plan.fleet); !s.ok()) return s;
  plan.tiers.tiers = absl::GetFlag(FLAGS_tiers);
  plan.tiers.gateways = absl::GetFlag(FLAGS_gateways);
  if (absl::Status s = ReadParsedFlags(plan); !s.ok()) return s;
  plan.transport.tls = absl::GetFlag(FLAGS_tls);
  plan.output.dir = absl::GetFlag(FLAGS_output);
  plan.output.bin_dir = absl::GetFlag(FLAGS_bin_dir);
  if (plan.output.bin_dir.empty()) {
    plan.output.bin_dir =
        std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
  }
  if (absl::Status s = CheckSimPlan(plan); !s.ok()) return s;
  return plan;
}

}  // namespace fedberry::sim
