// fedberry-sim's flags; sim_flags.h says how they are read.
#include "apps/sim/sim_flags.h"

#include <filesystem>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "runtime/image_dataset.h"

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
  job.partition = absl::GetFlag(FLAGS_partition);
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

// The training plan, aggregation and round flags.
void ReadServerJobFlags(ServerPassThrough& s) {
  s.optimizer = absl::GetFlag(FLAGS_optimizer);
  s.loss = absl::GetFlag(FLAGS_loss);
  s.task = absl::GetFlag(FLAGS_task);
  s.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  s.input_shape = absl::GetFlag(FLAGS_input_shape);
  s.num_outputs = absl::GetFlag(FLAGS_num_outputs);
  s.input_mean = absl::GetFlag(FLAGS_input_mean);
  s.input_std = absl::GetFlag(FLAGS_input_std);
  s.label_column = absl::GetFlag(FLAGS_label_column);
  s.feature_columns = absl::GetFlag(FLAGS_feature_columns);
  s.strategy = absl::GetFlag(FLAGS_strategy);
  s.proximal_mu = absl::GetFlag(FLAGS_proximal_mu);
  s.server_lr = absl::GetFlag(FLAGS_server_lr);
  s.beta1 = absl::GetFlag(FLAGS_beta1);
  s.beta2 = absl::GetFlag(FLAGS_beta2);
  s.tau = absl::GetFlag(FLAGS_tau);
  s.trim_fraction = absl::GetFlag(FLAGS_trim_fraction);
  s.byzantine = absl::GetFlag(FLAGS_byzantine);
  s.krum_keep = absl::GetFlag(FLAGS_krum_keep);
  s.target_updates = absl::GetFlag(FLAGS_target_updates);
  s.over_select = absl::GetFlag(FLAGS_over_select);
  s.quorum = absl::GetFlag(FLAGS_quorum);
  s.mode = absl::GetFlag(FLAGS_mode);
  s.async_buffer = absl::GetFlag(FLAGS_async_buffer);
  s.staleness_weight = absl::GetFlag(FLAGS_staleness_weight);
  s.max_staleness = absl::GetFlag(FLAGS_max_staleness);
  s.max_concurrency = absl::GetFlag(FLAGS_max_concurrency);
}

// Encodings, evaluation on the boards, privacy and the rest.
void ReadServerExtraFlags(ServerPassThrough& s) {
  s.update_encoding = absl::GetFlag(FLAGS_update_encoding);
  s.topk_fraction = absl::GetFlag(FLAGS_topk_fraction);
  s.model_encoding = absl::GetFlag(FLAGS_model_encoding);
  s.evaluate_on_boards = absl::GetFlag(FLAGS_evaluate_on_boards);
  s.board_eval_every = absl::GetFlag(FLAGS_board_eval_every);
  s.personalize_steps = absl::GetFlag(FLAGS_personalize_steps);
  s.dp_noise_multiplier = absl::GetFlag(FLAGS_dp_noise_multiplier);
  s.dp_clip = absl::GetFlag(FLAGS_dp_clip);
  s.dp_delta = absl::GetFlag(FLAGS_dp_delta);
  s.dp_adaptive_clip = absl::GetFlag(FLAGS_dp_adaptive_clip);
  s.dp_target_quantile = absl::GetFlag(FLAGS_dp_target_quantile);
  s.dp_local = absl::GetFlag(FLAGS_dp_local);
  s.dp_target_epsilon = absl::GetFlag(FLAGS_dp_target_epsilon);
  s.dp_noise_seed = absl::GetFlag(FLAGS_dp_noise_seed);
  s.trainable = absl::GetFlag(FLAGS_trainable);
  s.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
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
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SimPlan> SimPlanFromFlags() {
  SimPlan plan;
  plan.job = JobFromFlags();
  ReadServerJobFlags(plan.server);
  ReadServerExtraFlags(plan.server);
  if (absl::Status s = ReadFleetFlags(plan.fleet); !s.ok()) return s;
  plan.tiers.tiers = absl::GetFlag(FLAGS_tiers);
  plan.tiers.gateways = absl::GetFlag(FLAGS_gateways);
  plan.tiers.site_mode = absl::GetFlag(FLAGS_site_mode);
  plan.tiers.site_async_buffer = absl::GetFlag(FLAGS_site_async_buffer);
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
