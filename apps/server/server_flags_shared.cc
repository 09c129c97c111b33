// fedberry-server's flags that fedberry-sim takes too and passes through to
// the server it starts: the job's training plan, aggregation, how rounds
// close, asynchronous rounds, encodings, evaluation on the boards,
// differential privacy, what trains and the live fleet page. Defined once,
// here, and linked by both programs; server_flags_shared.h says how they are
// read. Names, defaults and help texts are the command line's interface:
// keep them.
#include "apps/server/server_flags_shared.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"

ABSL_FLAG(double, quorum, 0.5,
          "Share of the selected clients whose updates close a round at its "
          "deadline; below it the round starts over.");
ABSL_FLAG(double, weight_decay, 0, "Local weight decay (L2 penalty).");
ABSL_FLAG(std::string, optimizer, "sgd", "Local optimizer: sgd, adam, adamw.");
ABSL_FLAG(std::string, loss, "",
          "Loss: cross_entropy, bce_with_logits (classification), mse, l1 "
          "(regression), or model (the TorchScript module's own "
          "loss(output, target) method). Default: model when the module has "
          "one, else cross_entropy or mse by --task.");
ABSL_FLAG(std::string, task, "classification",
          "classification (integer labels; accuracy) or regression (float "
          "targets; RMSE and MAE).");
ABSL_FLAG(std::string, input_shape, "",
          "One sample's shape, e.g. 3,32,32 (images are resized to it) or 12 "
          "(CSV features). Default: the evaluation data's.");
ABSL_FLAG(uint32_t, num_outputs, 0,
          "Model outputs (classes). 0: the evaluation data's classes (1 for "
          "regression).");
ABSL_FLAG(std::string, input_mean, "",
          "Normalisation (x - mean) / std per channel or feature, "
          "comma-separated (one value applies to all). Default: "
          "Fashion-MNIST's for idx data, the evaluation data's per-feature "
          "statistics for csv, none for images.");
ABSL_FLAG(std::string, input_std, "", "See --input_mean.");
ABSL_FLAG(std::string, label_column, "",
          "csv: the label's column name (default: the last column).");
ABSL_FLAG(std::string, feature_columns, "",
          "csv: comma-separated feature column names (default: all but the "
          "label).");
ABSL_FLAG(double, evaluate_on_boards, 0,
          "Evaluation on the boards: each board holds out this share of its "
          "samples (chosen from their positions and --seed, the same after "
          "a restart, never trained on) and evaluates models on it; the "
          "figures, weighted by samples, are the rounds' boards_eval_* "
          "(works with --eval_data= empty). 0: off.");
ABSL_FLAG(int, board_eval_every, 1,
          "With --evaluate_on_boards: the boards evaluate every N-th "
          "round's model, and always the last one (every board still "
          "there).");
ABSL_FLAG(int, personalize_steps, 0,
          "With --evaluate_on_boards: each board also trains a copy of the "
          "model this many steps on its own training share and reports its "
          "accuracy (boards_eval_personalized_*); the copy is never sent. "
          "0: off.");
ABSL_FLAG(std::string, metrics_listen, "",
          "Address for the Prometheus /metrics and /healthz endpoint (job "
          "figures only, never model data): a port alone (9464) binds "
          "loopback; host:port binds that address; empty = off.");
ABSL_FLAG(int, metrics_max_connections, 64,
          "With --metrics_listen: connections the page's listener holds at "
          "once; one beyond it is closed as soon as it is accepted.");
ABSL_FLAG(int, metrics_max_connections_per_ip, 16,
          "With --metrics_listen: connections one address may hold at once "
          "(behind an SSH tunnel or a proxy every caller is one address).");
ABSL_FLAG(int, target_updates, 0,
          "Partial participation: a round closes on its first K updates (0: "
          "when every selected board reported); later updates are refused "
          "and counted (late_updates in rounds.jsonl).");
ABSL_FLAG(double, over_select, 1.0,
          "Select this many times the boards a round needs (--target_updates, "
          "else --fraction/--min_clients), e.g. 1.3, so stragglers do not "
          "hold it up.");
ABSL_FLAG(std::string, strategy, "fedavg",
          "How a round's updates become the next model: fedavg (weighted "
          "mean), fedprox (fedavg, boards add a proximal term: "
          "--proximal_mu), fedadam, fedyogi, fedadagrad (server optimizers: "
          "--server_lr, --beta1, --beta2, --tau), median, trimmed_mean "
          "(--trim_fraction), krum, multikrum (--byzantine, --krum_keep). "
          "See docs/guide/strategies.md.");
ABSL_FLAG(double, proximal_mu, 0,
          "fedprox: weight mu of the proximal term (mu/2)||w - w_global||^2 "
          "boards add to their loss (e.g. 0.01).");
ABSL_FLAG(double, server_lr, 1.0,
          "fedadam/fedyogi/fedadagrad: server step (defaults measured on the "
          "default 5-round job: docs/guide/strategies.md).");
ABSL_FLAG(double, beta1, 0.5, "Server optimizers: first-moment decay.");
ABSL_FLAG(double, beta2, 0.99, "fedadam/fedyogi: second-moment decay.");
ABSL_FLAG(double, tau, 1.0,
          "Server optimizers: adaptivity, added to sqrt(v). Coordinates that "
          "change much less than tau take a momentum step of server_lr/tau "
          "times their change; smaller tau adapts more (e.g. 1e-3).");
ABSL_FLAG(double, dp_noise_multiplier, 0,
          "Differential privacy (user-level, central: the server is "
          "trusted): Gaussian noise of this many times --dp_clip is added "
          "to the sum of the boards' clipped updates, boards join each round "
          "independently with probability --fraction (Poisson sampling), "
          "and the mean divides by the expected cohort, so a board's sample "
          "count no longer weighs. 0: off. Needs --dp_clip; fedavg, fedprox "
          "or a server optimizer; a model without batch norm.");
ABSL_FLAG(double, dp_clip, 0,
          "Differential privacy: the L2 norm bound on each board's update "
          "(its difference from the round's model), applied on the board "
          "before encoding and again by the server.");
ABSL_FLAG(bool, dp_adaptive_clip, false,
          "Differential privacy: --dp_clip is the initial bound, which then "
          "follows --dp_target_quantile of the boards' update norms (Andrew "
          "et al. 2021, from a noisy count of the updates within the bound; "
          "--dp_noise_multiplier is the total, split between that count and "
          "the updates). TensorFlow Federated starts it at 0.1.");
ABSL_FLAG(bool, dp_local, false,
          "Differential privacy for a gateway that is not trusted: each "
          "board adds the noise (--dp_noise_multiplier x --dp_clip) to its "
          "own clipped update, and epsilon is each board's, over the rounds "
          "it took part in (rounds.jsonl: the most any board spent).");
ABSL_FLAG(double, dp_target_quantile, 0.5,
          "--dp_adaptive_clip: the share of updates meant to fall within "
          "the bound.");
ABSL_FLAG(double, dp_delta, 1e-5,
          "Differential privacy: the delta epsilon is stated at (well below "
          "1 / the number of boards).");
ABSL_FLAG(double, dp_target_epsilon, 0,
          "Differential privacy: end the job before a round would spend "
          "more than this epsilon. 0: run every round.");
ABSL_FLAG(uint64_t, dp_noise_seed, 0,
          "Differential privacy: seeds the noise, for tests only (noise an "
          "observer can replay protects nothing). 0: the system's "
          "entropy.");
ABSL_FLAG(double, trim_fraction, 0.1,
          "trimmed_mean: share of values dropped at each end, per "
          "coordinate, in [0, 0.5).");
ABSL_FLAG(int, byzantine, 0,
          "krum/multikrum: f, the faulty boards to tolerate; every round "
          "needs more than 2f + 2 updates.");
ABSL_FLAG(int, krum_keep, 0,
          "multikrum: m, the best-scored updates averaged (1 <= m <= n - f).");
ABSL_FLAG(std::string, update_encoding, "raw",
          "How boards send updates: raw (float32 weights), fp16, int8 "
          "(per-tensor scale) or topk (--topk_fraction of the values with "
          "error feedback); lossy ones send the difference from the global "
          "model.");
ABSL_FLAG(double, topk_fraction, 0.01,
          "topk: share of each tensor's values sent, in (0, 1].");
ABSL_FLAG(std::string, model_encoding, "raw",
          "How the server sends the global model: raw or fp16.");
ABSL_FLAG(std::string, trainable, "",
          "Train only the parameters whose whole name matches this regular "
          "expression (ECMAScript, e.g. 'fc.*' or 'layer3\\..*|fc\\..*'); "
          "the others stay as in the initial model, get no gradients or "
          "optimizer state on the boards and are never sent. Empty: train "
          "everything. Not for a gateway (--upstream): the parent's plan "
          "says what trains.");
ABSL_FLAG(std::string, mode, "sync",
          "sync: each round waits for its cohort. async: asynchronous "
          "buffered rounds (FedBuff): boards train on the latest model as "
          "they ask, and every --async_buffer updates make a new version; "
          "--rounds then counts versions. A site gateway (--upstream) with "
          "async sends its parent, per task, the first --async_buffer "
          "updates of its boards.");
ABSL_FLAG(int, async_buffer, 10,
          "--mode=async: updates folded into each new model version (K).");
ABSL_FLAG(std::string, staleness_weight, "polynomial",
          "--mode=async: how an update s versions old weighs: polynomial "
          "(1/sqrt(1+s)) or constant (1).");
ABSL_FLAG(int, max_staleness, 10,
          "--mode=async: an update more versions old than this is refused.");
ABSL_FLAG(int, max_concurrency, 0,
          "--mode=async: boards training at once (the others wait, "
          "long-polling); 0: every board that asks.");

namespace fedberry::apps {
namespace {

void ReadSharedPlanFlags(PlanConfig& p) {
  p.optimizer = absl::GetFlag(FLAGS_optimizer);
  p.loss = absl::GetFlag(FLAGS_loss);
  p.task = absl::GetFlag(FLAGS_task);
  p.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  p.input_shape = absl::GetFlag(FLAGS_input_shape);
  p.num_outputs = absl::GetFlag(FLAGS_num_outputs);
  p.input_mean = absl::GetFlag(FLAGS_input_mean);
  p.input_std = absl::GetFlag(FLAGS_input_std);
  p.label_column = absl::GetFlag(FLAGS_label_column);
  const std::string features = absl::GetFlag(FLAGS_feature_columns);
  p.feature_columns.clear();
  if (!features.empty()) p.feature_columns = absl::StrSplit(features, ',');
  p.trainable = absl::GetFlag(FLAGS_trainable);
  p.update_encoding = absl::GetFlag(FLAGS_update_encoding);
  p.topk_fraction = absl::GetFlag(FLAGS_topk_fraction);
  p.model_encoding = absl::GetFlag(FLAGS_model_encoding);
}

void ReadSharedRoundFlags(ServerConfig& c) {
  c.rounds.target_updates = absl::GetFlag(FLAGS_target_updates);
  c.rounds.over_select = absl::GetFlag(FLAGS_over_select);
  c.rounds.quorum = absl::GetFlag(FLAGS_quorum);
  c.mode.mode = absl::GetFlag(FLAGS_mode);
  c.mode.async_buffer = absl::GetFlag(FLAGS_async_buffer);
  c.mode.staleness_weight = absl::GetFlag(FLAGS_staleness_weight);
  c.mode.max_staleness = absl::GetFlag(FLAGS_max_staleness);
  c.mode.max_concurrency = absl::GetFlag(FLAGS_max_concurrency);
  c.board_eval.evaluate_on_boards = absl::GetFlag(FLAGS_evaluate_on_boards);
  c.board_eval.every = absl::GetFlag(FLAGS_board_eval_every);
  c.board_eval.personalize_steps = absl::GetFlag(FLAGS_personalize_steps);
}

void ReadSharedStrategyFlags(StrategyConfig& s) {
  s.name = absl::GetFlag(FLAGS_strategy);
  s.proximal_mu = absl::GetFlag(FLAGS_proximal_mu);
  s.server_lr = absl::GetFlag(FLAGS_server_lr);
  s.beta1 = absl::GetFlag(FLAGS_beta1);
  s.beta2 = absl::GetFlag(FLAGS_beta2);
  s.tau = absl::GetFlag(FLAGS_tau);
  s.trim_fraction = absl::GetFlag(FLAGS_trim_fraction);
  s.byzantine = absl::GetFlag(FLAGS_byzantine);
  s.krum_keep = absl::GetFlag(FLAGS_krum_keep);
}

void ReadSharedDpFlags(DpConfig& dp) {
  dp.noise_multiplier = absl::GetFlag(FLAGS_dp_noise_multiplier);
  dp.clip = absl::GetFlag(FLAGS_dp_clip);
  dp.adaptive_clip = absl::GetFlag(FLAGS_dp_adaptive_clip);
  dp.local = absl::GetFlag(FLAGS_dp_local);
  dp.target_quantile = absl::GetFlag(FLAGS_dp_target_quantile);
  dp.delta = absl::GetFlag(FLAGS_dp_delta);
  dp.target_epsilon = absl::GetFlag(FLAGS_dp_target_epsilon);
  dp.noise_seed = absl::GetFlag(FLAGS_dp_noise_seed);
}

}  // namespace

void ReadSharedServerFlags(ServerConfig& config) {
  ReadSharedPlanFlags(config.plan);
  ReadSharedRoundFlags(config);
  ReadSharedStrategyFlags(config.strategy);
  ReadSharedDpFlags(config.dp);
  config.transport.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.transport.metrics_max_connections =
      absl::GetFlag(FLAGS_metrics_max_connections);
  config.transport.metrics_max_connections_per_ip =
      absl::GetFlag(FLAGS_metrics_max_connections_per_ip);
}

}  // namespace fedberry::apps
