// fedberry-server: the aggregation server of a federated training job.
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "checkpoint/atomic_write.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/torch_archive.h"
#include "client/client_agent.h"
#include "client/round_meter.h"
#include "proto/wire.h"
#include "runtime/command_line.h"
#include "runtime/compute_kernels.h"
#include "runtime/device_facts.h"
#include "runtime/fd_limit.h"
#include "runtime/heap_tuning.h"
#include "runtime/image_dataset.h"
#include "runtime/lock_checks.h"
#include "runtime/log_text.h"
#include "runtime/periodic_sampler.h"
#include "runtime/proc_files.h"
#include "runtime/shutdown_signal.h"
#include "runtime/status_macros.h"
#include "runtime/torchscript_model.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"
#include "security/transport.h"
#include "server/federation_checkpoint.h"
#include "server/federation_server.h"
#include "server/fleet/fleet_status.h"
#include "server/fleet/version_gate.h"
#include "server/fleet_view.h"
#include "server/job_plan.h"
#include "server/metrics_http_server.h"
#include "server/metrics_log.h"
#include "server/privacy/dp_options.h"
#include "server/privacy/local_privacy_budget.h"
#include "server/privacy/privacy_budget.h"
#include "server/round/buffered_versions.h"
#include "server/round/cohort_selection.h"
#include "server/round/staleness.h"
#include "server/server_metrics.h"
#include "tiers/clipped_sum.h"
#include "tiers/gateway_trainer.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "Address to listen on; port 0 picks a free port (written to "
          "<output>/server.addr).");
ABSL_FLAG(int, rounds, 5, "Number of federated rounds.");
ABSL_FLAG(double, fraction, 1.0,
          "Share of available clients selected each round.");
ABSL_FLAG(int, min_clients, 2, "Minimum clients selected per round.");
ABSL_FLAG(int, min_clients_to_start, 2,
          "Available clients needed before a round opens.");
ABSL_FLAG(double, quorum, 0.5,
          "Share of the selected clients whose updates close a round at its "
          "deadline; below it the round starts over.");
ABSL_FLAG(int, local_epochs, 1, "Local epochs per round (when local_steps=0).");
ABSL_FLAG(int, local_steps, 0, "Local batches per round; 0 = whole epochs.");
ABSL_FLAG(int, batch_size, 32, "Local batch size.");
ABSL_FLAG(double, lr, 0.05, "Local learning rate.");
ABSL_FLAG(double, momentum, 0.9, "Local SGD momentum (sgd only).");
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
ABSL_FLAG(bool, skip_bad_rows, false,
          "csv evaluation data: skip malformed rows instead of refusing the "
          "file.");
ABSL_FLAG(absl::Duration, round_deadline, absl::Minutes(10),
          "A round closes at this deadline once the quorum reported.");
ABSL_FLAG(absl::Duration, paused_grace, absl::Minutes(5),
          "Past the deadline, a round below its quorum waits up to this much "
          "longer while selected clients report (heartbeat) that they are "
          "paused under memory pressure.");
ABSL_FLAG(std::string, model, "lenet5",
          "A built-in model (lenet5, resnet8, mlp, wide-mlp, tabular-mlp) or "
          "a TorchScript file saved with torch.jit.script(model).save(PATH), "
          "which boards fetch once and cache.");
ABSL_FLAG(std::string, eval_data, fedberry::runtime::kDefaultFashionMnistDir,
          "Held-out data the server evaluates each round's model on: "
          "idx:DIR (its t10k files; a bare folder means idx), csv:FILE or "
          "images:DIR. Empty: no server-side evaluation.");
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
ABSL_FLAG(absl::Duration, board_eval_deadline, absl::Minutes(2),
          "With --evaluate_on_boards: how long a round's report waits for "
          "boards that were asked to evaluate and have not answered.");
ABSL_FLAG(int, personalize_steps, 0,
          "With --evaluate_on_boards: each board also trains a copy of the "
          "model this many steps on its own training share and reports its "
          "accuracy (boards_eval_personalized_*); the copy is never sent. "
          "0: off.");
ABSL_FLAG(bool, evaluate_only, false,
          "No training: once --min_clients_to_start boards are there, they "
          "evaluate the model (--model, with --weights) on the shares they "
          "hold out (--evaluate_on_boards, the same samples as in a training "
          "job with the same --seed: never trained on), rounds.jsonl gets "
          "one line (round 0) and the job ends. To check a model before "
          "deploying it.");
ABSL_FLAG(std::string, weights, "",
          "The model's weights: a global_model.pt an earlier job wrote "
          "(named tensors; every tensor of the model, same shapes). Empty: "
          "the model's own (a TorchScript file's, or a built-in model's "
          "seeded initialisation).");
ABSL_FLAG(std::string, output, "fedberry-out",
          "Output folder: rounds.jsonl, clients.jsonl, global_model.pt.");
ABSL_FLAG(uint64_t, seed, 1,
          "Seed for the initial model, cohorts, data order.");
ABSL_FLAG(int, checkpoint_keep, 3,
          "Federation checkpoints kept in <output>/checkpoints.");
ABSL_FLAG(bool, resume, true,
          "Continue the job from <output>/checkpoints when one is there.");
ABSL_FLAG(std::string, metrics_listen, "",
          "Address for the Prometheus /metrics and /healthz endpoint (job "
          "figures only, never model data): a port alone (9464) binds "
          "loopback; host:port binds that address; empty = off.");
ABSL_FLAG(std::string, min_client_version, "",
          "The oldest fedberry-client release that may join (e.g. 0.2.0): "
          "an older board is refused at join and told to upgrade, and one "
          "restored from a checkpoint joins again and is told so. Empty: any "
          "release.");
ABSL_FLAG(std::string, tls_cert, "",
          "This server's TLS certificate (PEM, e.g. from fedberry-pki server "
          "NAME --san=DNS:gateway.local); with --tls_key, turns TLS on. "
          "Re-read when the file changes.");
ABSL_FLAG(std::string, tls_key, "", "The private key of --tls_cert (PEM).");
ABSL_FLAG(std::string, client_ca, "",
          "Mutual TLS: the fleet CA certificate (PEM) that signs board "
          "certificates. A board without one cannot connect, joins only "
          "under its certificate's name, and acts only for its own client "
          "id.");
ABSL_FLAG(std::string, revoked, "",
          "Revoked boards: a CRL (fedberry-pki revoke NAME writes "
          "revoked.crl) or a text file of board names and SHA-256 "
          "certificate fingerprints. Re-read when it changes and on SIGHUP; "
          "needs --client_ca.");
ABSL_FLAG(bool, insecure, false,
          "Serve plaintext on a non-loopback --listen address (no TLS, no "
          "board identity): trusted networks only.");
ABSL_FLAG(int, threads, 0, "LibTorch threads for evaluation (0 = default).");
ABSL_FLAG(bool, overlap_evaluation, true,
          "Evaluate each round's model while the next round trains (after a "
          "finite check of its first 100 evaluation samples), so boards do "
          "not wait for the evaluation; the round's report follows it. Not "
          "for the last round. Worth it where the gateway has a core the "
          "boards' training does not use; false: evaluate before the next "
          "round opens.");
ABSL_FLAG(std::string, planner, "uniform",
          "How local work is spread over a round's clients: uniform (every "
          "client trains the job's config), greedy or ilp (each client's "
          "local_steps planned from its measured speed and transfer time so "
          "all finish together; the round's total steps stay the same).");
ABSL_FLAG(double, planner_min_factor, 0.0,
          "Least work of a planned client, as a share of the uniform share "
          "(at least 1 step).");
ABSL_FLAG(double, planner_max_factor, 4.0,
          "Most work of a planned client, as a multiple of the uniform share.");
ABSL_FLAG(int, planner_max_epochs, 0,
          "Most passes a planned client makes over its own data (0: no "
          "bound).");
ABSL_FLAG(double, planner_ilp_time_limit, 1.0,
          "Seconds GLPK may spend on a round's plan before the ilp planner "
          "takes the greedy plan.");
ABSL_FLAG(bool, data_moves, false,
          "Trusted clusters only: instead of setting local steps, the greedy "
          "or ilp planner moves training samples from slow clients to fast "
          "ones for a round, through this server, among clients that joined "
          "with --allow_data_moves (epoch mode: --local_steps=0). Off: no "
          "sample ever leaves its board.");
ABSL_FLAG(double, max_update_ratio, 1000,
          "Refuse an update that moves the model more than this many times "
          "the global model's L2 norm (at least 1): finite poison such as "
          "every weight 1e38 never reaches the average. 0 turns the bound "
          "off. Accepted updates log their ratio.");
ABSL_FLAG(double, max_samples_ratio, 10,
          "A board may declare at most this many times the fleet's median "
          "samples a board (a gateway: per board it speaks for): FedAvg "
          "weighs updates by their samples, so a board declaring 2^40 would "
          "outweigh the whole fleet. Refused at join once 3 boards are "
          "registered; a board that joined earlier has its updates weighed "
          "against the bound. 0 turns it off.");
ABSL_FLAG(int, max_clients, 10000,
          "Registered clients at most; a join beyond it is refused "
          "(RESOURCE_EXHAUSTED) once boards that joined but never asked for "
          "a task are forgotten.");
ABSL_FLAG(int, max_threads, 2048,
          "gRPC's resource quota for threads of synchronous calls. Every "
          "call of this server is a callback that holds no thread while it "
          "waits, so this bounds nothing today; kept so that older command "
          "lines still start.");
ABSL_FLAG(int, max_transport_mib, 256,
          "MiB gRPC's transport may hold for all board connections (its "
          "memory quota), plus 256 KiB per registered board; near it gRPC "
          "shrinks buffers and windows instead of holding a model's worth "
          "per connection. 0: no bound.");
ABSL_FLAG(int, max_streams, 32,
          "Model and sample streams served at once (each holds a chunk or "
          "two of the model, not a thread). A model pull beyond it waits its "
          "turn (no thread, no copy); a sample stream beyond it is refused "
          "with RESOURCE_EXHAUSTED and the board retries. 0: no limit.");
ABSL_FLAG(int, max_inflight_updates, 16,
          "Update pushes taken at once; each holds one decoded update until "
          "it is aggregated, so the server's memory stays near the model's "
          "size times this, whatever the number of boards. A push beyond it "
          "waits its turn, first come first served (no thread; its header "
          "checked first), and is told to go when a place frees. 0: no "
          "limit.");
ABSL_FLAG(int, max_streams_per_caller, 4,
          "Model, sample and update streams, running or waiting, one caller "
          "may hold in each of those bounds: its certificate under mutual "
          "TLS, else its connection. Beyond it a stream is refused with "
          "RESOURCE_EXHAUSTED (logged at most every 10 s). 0: no limit.");
ABSL_FLAG(absl::Duration, stream_stall_time, absl::Seconds(30),
          "A running stream that moves no message for this long (a reader "
          "that stops reading, a push that stalls) is cut off and its caller "
          "logged, so it cannot hold its place until --max_stream_time. 0: "
          "never.");
ABSL_FLAG(absl::Duration, max_stream_time, absl::Minutes(10),
          "A model, sample or update stream still open after this long is "
          "cut off and its caller logged. 0: no limit.");
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
ABSL_FLAG(double, dp_clip_learning_rate, 0.2,
          "--dp_adaptive_clip: the bound moves by exp(-rate x (share within "
          "- target)) a round.");
ABSL_FLAG(double, dp_clipped_count_stddev, 0,
          "--dp_adaptive_clip: the noise on the count of updates within the "
          "bound; 0: 0.05 x the round's expected cohort, at least the noise "
          "multiplier. Must exceed half of --dp_noise_multiplier.");
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
ABSL_FLAG(std::string, upstream, "",
          "Tiers: make this server a site gateway of the parent server at "
          "HOST:PORT. It takes the parent's plan, joins it as one board that "
          "speaks for its own boards, runs each of the parent's rounds with "
          "them and sends up their weighted mean (weighing their samples "
          "summed); under a parent with differential privacy, the sum of "
          "their clipped updates, drawn with the parent's q, without noise. "
          "The job's rounds, strategy, privacy and evaluation are the "
          "parent's; --min_clients_to_start boards must join here first.");
ABSL_FLAG(std::string, upstream_name, "",
          "The name this gateway joins its parent under (default: the "
          "certificate's name, else gateway-HOSTNAME); stable across "
          "restarts.");
ABSL_FLAG(std::string, upstream_tls_ca, "",
          "CA certificate (PEM) the parent's certificate must chain to; turns "
          "TLS on towards the parent.");
ABSL_FLAG(std::string, upstream_tls_cert, "",
          "This gateway's certificate towards the parent (mutual TLS; e.g. "
          "fedberry-pki board NAME on the parent's CA).");
ABSL_FLAG(std::string, upstream_tls_key, "",
          "The private key of --upstream_tls_cert.");
ABSL_FLAG(std::string, upstream_tls_server_name, "",
          "The name the parent's certificate must carry (default: the host "
          "of --upstream).");
ABSL_FLAG(absl::Duration, data_move_wait, absl::Minutes(2),
          "How long a receiving client's pull waits for its sender's "
          "samples.");
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

namespace fs = std::filesystem;
using namespace fedberry;

namespace {

absl::Status SaveModel(const runtime::NamedTensors& model,
                       const std::string& path) {
  std::string bytes;
  try {
    torch::serialize::OutputArchive archive;
    for (const auto& t : model) archive.write(t.name, t.tensor);
    archive.save_to([&bytes](const void* data, size_t n) {
      bytes.append(static_cast<const char*>(data), n);
      return n;
    });
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("cannot save the global model to ", path, ": ", e.what()));
  }
  return checkpoint::WriteFileAtomically(checkpoint::FileSystem::Default(),
                                         path, bytes);
}

// --weights: the named tensors of a global_model.pt into `model`. Every
// tensor of the model must be there with its shape. InvalidArgument (or
// NotFound) naming the file and the tensor.
absl::Status LoadWeights(const std::string& path, runtime::Model& model) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> bytes =
      checkpoint::FileSystem::Default().ReadFile(path);
  if (!bytes.ok()) {
    return absl::NotFoundError(
        absl::StrCat("--weights: ", bytes.status().message()));
  }
  runtime::NamedTensors weights = model.State();
  RETURN_IF_ERROR(checkpoint::ArchiveFromBytes(
      *bytes, path, [&](torch::serialize::InputArchive& archive) {
        for (auto& t : weights) {
          torch::Tensor read;
          archive.read(t.name, read);
          if (!read.sizes().equals(t.tensor.sizes())) {
            throw std::runtime_error(
                absl::StrCat("tensor ", t.name, " has another shape"));
          }
          t.tensor = read.to(t.tensor.dtype());
        }
      }));
  RETURN_IF_ERROR(model.LoadState(weights));
  spdlog::info("weights of {} tensors from {}", weights.size(), path);
  return absl::OkStatus();
}

server::StrategyOptions StrategyOptionsFromFlags(const std::string& output) {
  server::StrategyOptions s;
  s.name = absl::GetFlag(FLAGS_strategy);
  s.proximal_mu = absl::GetFlag(FLAGS_proximal_mu);
  s.server_lr = absl::GetFlag(FLAGS_server_lr);
  s.beta1 = absl::GetFlag(FLAGS_beta1);
  s.beta2 = absl::GetFlag(FLAGS_beta2);
  s.tau = absl::GetFlag(FLAGS_tau);
  s.trim_fraction = absl::GetFlag(FLAGS_trim_fraction);
  s.byzantine = absl::GetFlag(FLAGS_byzantine);
  s.krum_keep = absl::GetFlag(FLAGS_krum_keep);
  s.spill_dir = output + "/spill";
  return s;
}

absl::StatusOr<server::JobPlanRequest> PlanRequestFromFlags(
    const std::string& output) {
  server::JobPlanRequest r;
  r.model = absl::GetFlag(FLAGS_model);
  r.task = absl::GetFlag(FLAGS_task);
  r.loss = absl::GetFlag(FLAGS_loss);
  r.optimizer = absl::GetFlag(FLAGS_optimizer);
  r.learning_rate = absl::GetFlag(FLAGS_lr);
  r.momentum = absl::GetFlag(FLAGS_momentum);
  r.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  ASSIGN_OR_RETURN(
      r.input_shape,
      server::ParseShape(absl::GetFlag(FLAGS_input_shape), "input_shape"));
  r.num_outputs = absl::GetFlag(FLAGS_num_outputs);
  ASSIGN_OR_RETURN(
      r.input_mean,
      server::ParseFloats(absl::GetFlag(FLAGS_input_mean), "input_mean"));
  ASSIGN_OR_RETURN(
      r.input_std,
      server::ParseFloats(absl::GetFlag(FLAGS_input_std), "input_std"));
  r.label_column = absl::GetFlag(FLAGS_label_column);
  const std::string features = absl::GetFlag(FLAGS_feature_columns);
  if (!features.empty()) r.feature_columns = absl::StrSplit(features, ',');
  r.strategy = absl::GetFlag(FLAGS_strategy);
  r.proximal_mu = absl::GetFlag(FLAGS_proximal_mu);
  const server::StrategyOptions s = StrategyOptionsFromFlags(output);
  if (s.name == "fedadam" || s.name == "fedyogi" || s.name == "fedadagrad") {
    r.strategy_parameters = {
        {"server_lr", s.server_lr}, {"beta1", s.beta1}, {"tau", s.tau}};
    if (s.name != "fedadagrad") r.strategy_parameters["beta2"] = s.beta2;
  } else if (s.name == "trimmed_mean") {
    r.strategy_parameters = {{"trim_fraction", s.trim_fraction}};
  } else if (s.name == "krum" || s.name == "multikrum") {
    r.strategy_parameters = {{"byzantine", s.byzantine}};
    if (s.name == "multikrum") r.strategy_parameters["krum_keep"] = s.krum_keep;
  }
  r.update_encoding = absl::GetFlag(FLAGS_update_encoding);
  r.topk_fraction = absl::GetFlag(FLAGS_topk_fraction);
  r.model_encoding = absl::GetFlag(FLAGS_model_encoding);
  r.trainable = absl::GetFlag(FLAGS_trainable);
  r.eval_data = absl::GetFlag(FLAGS_eval_data);
  r.skip_bad_rows = absl::GetFlag(FLAGS_skip_bad_rows);
  r.cache_dir = output + "/cache";
  return r;
}

// What a serving server holds until its job ends, in the order it must
// let go of it (members are destroyed last first).
struct Serving {
  std::unique_ptr<checkpoint::CheckpointStore> store;
  std::unique_ptr<server::MetricsLog> metrics;
  std::unique_ptr<security::RevocationList> revoked;
  std::unique_ptr<server::FederationServer> server;
  std::unique_ptr<runtime::FdUsageWatch> fd_watch;
  std::unique_ptr<runtime::PeriodicSampler> fd_sampler;
  std::unique_ptr<runtime::PeriodicSampler> revocation_watch;
  std::unique_ptr<server::MetricsHttpServer> metrics_http;
  v1::TrainingPlan plan;
  std::string script_source;  // TorchScript: the module the weights go in
  int rounds = 0;             // the job's; 0: a gateway's (its parent's)
};

// Exit codes: 2 for what the command line or the files get wrong, 3 when
// the server cannot start.
int ExitCodeOf(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsAlreadyExists(s) ? 3 : 2;
}

// The server's command line, typed: everything StartServing needs that
// does not come from the job's plan.
struct ServerConfig {
  std::string output;
  bool resume = false;
  int checkpoint_keep = 0;
  security::ServerTransportOptions transport;
  std::string metrics_listen;
  std::string upstream;  // a site gateway's parent; empty: its own job
  // The transport's and the coordinator's settings from the flags; the
  // plan's (model, encodings, strategy for a gateway) are set from the job.
  server::ServerOptions options;
};

// The coordinator's settings the flags give.
server::CoordinatorOptions CoordinatorOptionsFromFlags(
    bool relay, const std::string& output) {
  server::CoordinatorOptions c;
  c.rounds = absl::GetFlag(FLAGS_rounds);
  c.relay = relay;
  c.fraction = absl::GetFlag(FLAGS_fraction);
  c.target_updates = absl::GetFlag(FLAGS_target_updates);
  c.over_select = absl::GetFlag(FLAGS_over_select);
  c.min_clients_per_round = absl::GetFlag(FLAGS_min_clients);
  c.min_clients_to_start = absl::GetFlag(FLAGS_min_clients_to_start);
  c.quorum = absl::GetFlag(FLAGS_quorum);
  // Checked in Run(): a malformed version never gets here.
  c.version_gate =
      server::VersionGate::Parse(absl::GetFlag(FLAGS_min_client_version))
          .value_or(server::VersionGate());
  c.round_deadline = absl::GetFlag(FLAGS_round_deadline);
  c.paused_grace = absl::GetFlag(FLAGS_paused_grace);
  c.seed = absl::GetFlag(FLAGS_seed);
  c.train.set_local_epochs(absl::GetFlag(FLAGS_local_epochs));
  c.train.set_local_steps(absl::GetFlag(FLAGS_local_steps));
  c.train.set_batch_size(absl::GetFlag(FLAGS_batch_size));
  c.train.set_learning_rate(absl::GetFlag(FLAGS_lr));
  c.train.set_momentum(absl::GetFlag(FLAGS_momentum));
  c.planning.planner = absl::GetFlag(FLAGS_planner);
  c.planning.min_factor = absl::GetFlag(FLAGS_planner_min_factor);
  c.planning.max_factor = absl::GetFlag(FLAGS_planner_max_factor);
  c.planning.max_epochs = absl::GetFlag(FLAGS_planner_max_epochs);
  c.planning.ilp_time_limit_seconds =
      absl::GetFlag(FLAGS_planner_ilp_time_limit);
  c.planning.data_moves = absl::GetFlag(FLAGS_data_moves);
  c.data_move_wait = absl::GetFlag(FLAGS_data_move_wait);
  c.max_update_ratio = absl::GetFlag(FLAGS_max_update_ratio);
  c.max_samples_ratio = absl::GetFlag(FLAGS_max_samples_ratio);
  c.overlap_evaluation = absl::GetFlag(FLAGS_overlap_evaluation);
  c.max_clients = absl::GetFlag(FLAGS_max_clients);
  c.board_eval.holdout_fraction = absl::GetFlag(FLAGS_evaluate_on_boards);
  c.board_eval.every = absl::GetFlag(FLAGS_board_eval_every);
  c.board_eval.deadline = absl::GetFlag(FLAGS_board_eval_deadline);
  c.board_eval.personalize_steps = absl::GetFlag(FLAGS_personalize_steps);
  // A gateway averages its boards; the parent applies the job's strategy
  // to the gateways' averages.
  c.strategy =
      relay ? server::StrategyOptions{} : StrategyOptionsFromFlags(output);
  return c;
}

ServerConfig ServerConfigFromFlags() {
  ServerConfig config;
  config.output = absl::GetFlag(FLAGS_output);
  config.resume = absl::GetFlag(FLAGS_resume);
  config.checkpoint_keep = absl::GetFlag(FLAGS_checkpoint_keep);
  config.transport = {
      absl::GetFlag(FLAGS_listen),
      {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
       absl::GetFlag(FLAGS_client_ca)},
      absl::GetFlag(FLAGS_revoked),
      absl::GetFlag(FLAGS_insecure)};
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.upstream = absl::GetFlag(FLAGS_upstream);
  server::ServerOptions& o = config.options;
  o.listen = config.transport.listen;
  o.coordinator =
      CoordinatorOptionsFromFlags(!config.upstream.empty(), config.output);
  o.max_threads = absl::GetFlag(FLAGS_max_threads);
  o.max_transport_bytes =
      static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_max_transport_mib)))
      << 20;
  o.max_streams = absl::GetFlag(FLAGS_max_streams);
  o.max_inflight_updates = absl::GetFlag(FLAGS_max_inflight_updates);
  o.max_stream_time = absl::GetFlag(FLAGS_max_stream_time);
  o.stream_stall_time = absl::GetFlag(FLAGS_stream_stall_time);
  o.max_streams_per_caller = absl::GetFlag(FLAGS_max_streams_per_caller);
  return config;
}

// InvalidArgument naming what --evaluate_on_boards and its companions get
// wrong.
absl::Status CheckBoardEvalOptions(const server::CoordinatorOptions& c) {
  const server::BoardEvalOptions& e = c.board_eval;
  if (!(e.holdout_fraction >= 0 && e.holdout_fraction < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--evaluate_on_boards is the share of each board's samples held out: "
        "it must be in [0, 1), not ",
        e.holdout_fraction));
  }
  if (e.every < 1 || e.deadline <= absl::ZeroDuration() ||
      e.personalize_steps < 0) {
    return absl::InvalidArgumentError(
        "need --board_eval_every >= 1, --board_eval_deadline > 0 and "
        "--personalize_steps >= 0");
  }
  if (c.evaluate_only && e.holdout_fraction == 0) {
    return absl::InvalidArgumentError(
        "--evaluate_only evaluates on the boards' held-out shares: give "
        "--evaluate_on_boards (the share a training job with this --seed "
        "held out, so the model never saw those samples)");
  }
  if (e.holdout_fraction == 0) {
    return e.personalize_steps == 0
               ? absl::OkStatus()
               : absl::InvalidArgumentError(
                     "--personalize_steps is measured on the boards' held-out "
                     "samples: it needs --evaluate_on_boards");
  }
  if (c.relay) {
    return absl::InvalidArgumentError(
        "--evaluate_on_boards is for the server that runs the job; a site "
        "gateway's boards are evaluated by no one (set it on the top server)");
  }
  if (c.planning.data_moves) {
    return absl::InvalidArgumentError(
        "--evaluate_on_boards and --data_moves do not combine: moved samples "
        "would mix training and held-out shares");
  }
  return absl::OkStatus();
}

// InvalidArgument naming what the settings get wrong.
absl::Status CheckServerOptions(const server::ServerOptions& options) {
  const server::CoordinatorOptions& c = options.coordinator;
  RETURN_IF_ERROR(CheckBoardEvalOptions(c));
  if (c.planning.data_moves && c.train.local_steps() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--data_moves plans whole epochs: use --local_steps=0 (got ",
        c.train.local_steps(), ")"));
  }
  // The smallest round that can close: its quorum of the fewest selected.
  const int min_updates = std::max(
      1, static_cast<int>(std::ceil(
             c.quorum * std::max(c.min_clients_per_round, c.target_updates))));
  if (absl::Status s = server::ValidateStrategyOptions(c.strategy, min_updates);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid strategy settings: ", s.message()));
  }
  if (auto p = server::planner::RoundPlanner::Create(c.planning); !p.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid planner settings: ", p.status().message()));
  }
  if (c.rounds < 1 || c.train.batch_size() < 1 || !(c.fraction > 0) ||
      c.fraction > 1 || !(c.max_update_ratio >= 0) ||
      !(c.max_samples_ratio >= 0) || c.max_clients < 1 ||
      options.max_threads < 4 || options.max_inflight_updates < 0 ||
      c.target_updates < 0 || !(c.over_select >= 1) || c.over_select > 100 ||
      (c.train.local_epochs() < 1 && c.train.local_steps() < 1)) {
    return absl::InvalidArgumentError(
        "invalid job: need rounds >= 1, batch_size >= 1, 0 < fraction <= 1, "
        "local_epochs or local_steps >= 1, max_update_ratio >= 0, "
        "max_samples_ratio >= 0, "
        "max_clients >= 1, max_threads >= 4, max_inflight_updates >= 0, "
        "target_updates >= 0 and "
        "1 <= over_select <= 100");
  }
  return absl::OkStatus();
}

// The federation state to continue from (`resume`), checked against the
// job's plan; nullopt for a new job.
absl::StatusOr<std::optional<server::FederationSnapshot>> ResumeFrom(
    checkpoint::CheckpointStore& store, const v1::TrainingPlan& plan) {
  auto loaded = store.LoadLatest();
  if (!loaded.ok()) {
    if (!absl::IsNotFound(loaded.status())) {  // not merely none yet
      spdlog::warn("starting a new job: {}", loaded.status().ToString());
    }
    return std::nullopt;
  }
  for (const auto& s : loaded->skipped) {
    spdlog::warn("skipped checkpoint: {}", std::string(s.message()));
  }
  auto decoded = server::DecodeFederationCheckpoint(*loaded);
  if (!decoded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resume: ", decoded.status().ToString()));
  }
  if (absl::Status same = server::CheckSamePlan(*decoded, plan); !same.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resume: ", same.message()));
  }
  spdlog::info(
      "resuming the job from checkpoint {}: {} rounds done, next round {}, "
      "{} registered clients",
      loaded->name, decoded->snapshot.history.size(),
      decoded->snapshot.next_round, decoded->snapshot.clients.size());
  return std::move(decoded->snapshot);
}

// The server's evaluation on the plan's held-out data; empty without any.
server::Evaluator MakeEvaluator(server::JobPlan& job) {
  if (!job.eval) return nullptr;
  spdlog::info("evaluation set: {}", job.eval->Describe());
  return [model = std::shared_ptr<runtime::Model>(std::move(job.model)),
          eval = std::shared_ptr<runtime::Dataset>(std::move(job.eval)),
          objective = *job.objective](
             const runtime::NamedTensors& state,
             int64_t max_samples) -> absl::StatusOr<runtime::EvalResult> {
    if (absl::Status s = model->LoadState(state); !s.ok()) return s;
    return runtime::Evaluate(*model, *eval, objective, /*batch_size=*/100,
                             max_samples);
  };
}

// Saves each snapshot as the newest federation checkpoint; a failure is
// logged and the job goes on (a restart would redo the round).
server::SnapshotSink CheckpointSink(checkpoint::CheckpointStore* store,
                                    v1::TrainingPlan plan) {
  return [store,
          plan = std::move(plan)](const server::FederationSnapshot& snapshot) {
    auto files = server::EncodeFederationCheckpoint(snapshot, plan);
    auto saved = files.ok() ? store->Save(*files)
                            : absl::StatusOr<std::string>(files.status());
    if (saved.ok()) {
      spdlog::info("federation state after round {} saved as {}",
                   snapshot.next_round - 1, *saved);
    } else {
      spdlog::error("federation checkpoint after round {} failed: {}",
                    snapshot.next_round - 1, saved.status().ToString());
    }
  };
}

// Each round into the metrics files, the /metrics figures and the log.
server::ReportSink RoundSink(server::MetricsLog* log,
                             std::shared_ptr<server::ServerMetrics> figures,
                             int rounds) {
  return [log, rounds, figures](const server::RoundReport& r) {
    log->Write(r);
    figures->Record(r);
    if (r.round == 0) return;  // evaluate-only: the coordinator said it
    const std::string round = rounds > 0
                                  ? absl::StrCat(r.round, "/", rounds)
                                  : absl::StrCat(r.round, " (the parent's)");
    if (!r.refused_result.empty()) {
      spdlog::warn(
          "round {} done without a new model: {} of {} clients, its result "
          "was refused ({}); the global model stays as it was, {:.2f} s",
          round, r.participants, r.selected,
          runtime::Printable(r.refused_result, 300), r.round_seconds);
    } else if (r.eval && r.eval->regression) {
      spdlog::info(
          "round {} done: {} of {} clients, test RMSE {:.4f}, MAE {:.4f}, "
          "loss {:.4f}, {:.2f} s",
          round, r.participants, r.selected, r.eval->rmse, r.eval->mae,
          r.eval->mean_loss, r.round_seconds);
    } else if (r.eval) {
      spdlog::info(
          "round {} done: {} of {} clients, test accuracy {:.4f}, loss "
          "{:.4f}, {:.2f} s",
          round, r.participants, r.selected, r.eval->accuracy,
          r.eval->mean_loss, r.round_seconds);
    } else {
      spdlog::info("round {} done: {} of {} clients, {:.2f} s", round,
                   r.participants, r.selected, r.round_seconds);
    }
    if (r.privacy) {
      spdlog::info(
          "round {} privacy: epsilon {:.4g} at delta {:g} spent over {} "
          "round(s); {:.0f}% of its updates clipped",
          round, r.privacy->epsilon, r.privacy->delta, r.privacy->steps,
          100 * r.privacy->clipped_fraction);
    }
    if (r.version) {
      spdlog::info(
          "version {} published: {} updates, staleness mean {:.2f}, max {}",
          r.round, r.version->updates, r.version->staleness_mean,
          r.version->staleness_max);
    }
  };
}

// What watches a serving server: descriptors, the revocation list, and
// the /metrics endpoint when `metrics_listen` names one.
absl::Status StartWatches(Serving& serving,
                          std::shared_ptr<server::ServerMetrics> figures,
                          const std::string& metrics_listen,
                          const server::FleetJob& job) {
  // Each board holds a descriptor: say when they near the limit, since
  // gRPC then refuses connections without a word.
  serving.fd_watch = std::make_unique<runtime::FdUsageWatch>(
      runtime::FdLimitSystem::Real(),
      [](const std::string& what) { spdlog::error("{}", what); });
  serving.fd_sampler = std::make_unique<runtime::PeriodicSampler>(
      absl::Seconds(1), [w = serving.fd_watch.get()] { w->Check(); });
  // A revoked board is refused from its next call on, without a restart.
  if (security::RevocationList* revoked = serving.revoked.get()) {
    serving.revocation_watch = std::make_unique<runtime::PeriodicSampler>(
        absl::Seconds(2), [revoked] { revoked->Refresh(); });
  }
  if (metrics_listen.empty()) return absl::OkStatus();
  server::FederationServer* federation = serving.server.get();
  const auto fleet = [federation, figures, job] {
    return server::FleetOf(federation->coordinator(), *figures, job,
                           absl::Now());
  };
  auto metrics_http = server::MetricsHttpServer::Start(
      metrics_listen,
      {[federation] { return federation->Status(); },
       [figures](const server::JobStatus& s) { return figures->Render(s); },
       [fleet] { return server::FleetPage(fleet()); },
       [fleet] { return server::FleetJson(fleet()); }});
  if (!metrics_http.ok()) {
    return absl::UnavailableError(std::string(metrics_http.status().message()));
  }
  serving.metrics_http = *std::move(metrics_http);
  spdlog::info(
      "fleet page on http://{0}/ (data: /api/fleet.json), metrics on "
      "/metrics, health on /healthz",
      serving.metrics_http->address());
  return absl::OkStatus();
}

// The job's plan into the server's settings: model, parameter count,
// encodings; and a gateway's relay.
void ApplyPlan(server::JobPlan& job, server::RelaySink relay_sink,
               server::ServerOptions& options) {
  server::CoordinatorOptions& c = options.coordinator;
  // Evaluation on the boards is the job's: every board holds out the same
  // share, chosen with the job's seed.
  if (c.board_eval.holdout_fraction > 0) {
    job.plan.set_eval_holdout_fraction(c.board_eval.holdout_fraction);
    job.plan.set_eval_holdout_seed(c.seed);
    job.plan.set_personalize_steps(
        static_cast<uint32_t>(c.board_eval.personalize_steps));
  }
  c.board_eval.regression = job.plan.task() == "regression";
  c.evaluate_only = absl::GetFlag(FLAGS_evaluate_only);
  c.relay = static_cast<bool>(relay_sink);
  c.relay_sink = std::move(relay_sink);
  c.train.set_model(job.plan.model_name());
  // Model::State lists parameters first: the server optimizers step those.
  c.strategy.parameter_count = static_cast<int>(job.model->Parameters().size());
  c.update_encoding = job.plan.update_encoding();
  c.topk_fraction = job.plan.topk_fraction();
  c.model_encoding = job.plan.model_encoding();
  c.trainable_tensors.assign(job.plan.trainable_tensors().begin(),
                             job.plan.trainable_tensors().end());
  options.plan = {job.plan, job.model_file};
}

server::DpOptions DpOptionsFromFlags() {
  server::DpOptions dp;
  dp.clip = absl::GetFlag(FLAGS_dp_clip);
  dp.noise_multiplier = absl::GetFlag(FLAGS_dp_noise_multiplier);
  dp.sampling_rate = absl::GetFlag(FLAGS_fraction);
  dp.delta = absl::GetFlag(FLAGS_dp_delta);
  dp.target_epsilon = absl::GetFlag(FLAGS_dp_target_epsilon);
  dp.noise_seed = absl::GetFlag(FLAGS_dp_noise_seed);
  dp.adaptive_clip = absl::GetFlag(FLAGS_dp_adaptive_clip);
  dp.local = absl::GetFlag(FLAGS_dp_local);
  dp.target_quantile = absl::GetFlag(FLAGS_dp_target_quantile);
  dp.clip_learning_rate = absl::GetFlag(FLAGS_dp_clip_learning_rate);
  dp.clipped_count_stddev = absl::GetFlag(FLAGS_dp_clipped_count_stddev);
  return dp;
}

// InvalidArgument naming the setting that voids differential privacy's
// guarantee or cannot be kept under it.
absl::Status CheckDpCombination(const server::CoordinatorOptions& c) {
  const char* conflict =
      c.relay ? "a site gateway's own --dp_* flags (set them on the root "
                "only: its settings reach this gateway's boards with each "
                "task, and noise and accounting happen at the root)"
      : c.planning.data_moves ? "--data_moves (moved samples leave their board)"
      : c.board_eval.holdout_fraction > 0
          ? "--evaluate_on_boards (each board's figures are released "
            "without noise)"
      : c.target_updates > 0 || c.over_select > 1
          ? "--target_updates or --over_select (the accountant assumes "
            "Poisson sampling: --fraction is each board's chance)"
          : nullptr;
  if (conflict == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("differential privacy does not combine with ", conflict));
}

// Asynchronous rounds when --mode=async asks for them, refusing the
// settings they cannot honour.
absl::Status ApplyMode(server::CoordinatorOptions& c) {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "sync") return absl::OkStatus();
  if (mode != "async") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mode must be sync or async, not '", runtime::Printable(mode), "'"));
  }
  server::AsyncOptions a;
  ASSIGN_OR_RETURN(a.weighting, server::ParseStalenessWeighting(
                                    absl::GetFlag(FLAGS_staleness_weight)));
  a.buffer = absl::GetFlag(FLAGS_async_buffer);
  a.max_staleness = absl::GetFlag(FLAGS_max_staleness);
  a.max_concurrency = absl::GetFlag(FLAGS_max_concurrency);
  RETURN_IF_ERROR(server::CheckAsyncOptions(a));
  const std::string& rule = c.strategy.name;
  const char* conflict =
      rule == "median" || rule == "trimmed_mean" || rule == "krum" ||
              rule == "multikrum"
          ? "--strategy=median, trimmed_mean, krum or multikrum (they ignore "
            "weights, so a stale update would count in full; use fedavg, "
            "fedprox, fedadam, fedyogi or fedadagrad)"
      : DpOptionsFromFlags().enabled()
          ? "differential privacy (its accountant assumes Poisson-sampled "
            "synchronous rounds)"
      : c.board_eval.holdout_fraction > 0 || c.evaluate_only
          ? "--evaluate_on_boards or --evaluate_only (boards are training)"
      : c.planning.planner != "uniform" || c.planning.data_moves
          ? "--planner or --data_moves (they plan a synchronous cohort's "
            "work; each asynchronous task is the plan's)"
      : c.target_updates > 0 || c.over_select > 1 || c.fraction < 1
          ? "--fraction, --target_updates or --over_select (no cohort is "
            "drawn: --async_buffer sets the updates per version, "
            "--max_concurrency the boards training at once)"
          : nullptr;
  if (conflict != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode=async does not combine with ", conflict));
  }
  c.async = a;
  spdlog::info(
      "asynchronous rounds: a version every {} updates, staleness weight {}, "
      "max staleness {}, {}",
      a.buffer, server::StalenessWeightingName(a.weighting), a.max_staleness,
      a.max_concurrency > 0
          ? absl::StrCat("at most ", a.max_concurrency, " boards training")
          : std::string("every board that asks trains"));
  return absl::OkStatus();
}

// Differential privacy when the flags ask for it: Poisson cohorts and the
// privacy budget in the coordinator's options.
absl::Status ApplyPrivacy(const server::DpOptions& dp,
                          const runtime::NamedTensors& model,
                          server::CoordinatorOptions& c) {
  if (!dp.enabled()) return absl::OkStatus();
  RETURN_IF_ERROR(server::CheckDpOptions(dp, c.strategy.name, model,
                                         c.strategy.parameter_count));
  RETURN_IF_ERROR(CheckDpCombination(c));
  std::shared_ptr<server::RoundBudget> budget =
      dp.local ? std::shared_ptr<server::RoundBudget>(
                     std::make_shared<server::LocalPrivacyBudget>(dp))
               : std::make_shared<server::PrivacyBudget>(dp);
  if (const std::string why = budget->EndsBefore(); !why.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the privacy budget allows no round: ", why));
  }
  c.selection =
      std::make_shared<const server::PoissonCohorts>(dp.sampling_rate);
  c.budget = std::move(budget);
  spdlog::info(
      "{}differential privacy: {} {:g}, noise multiplier {:g}, sampling "
      "rate {:g}, delta {:g}{}",
      dp.local ? "local " : "",
      dp.adaptive_clip ? absl::StrCat("adaptive clip towards quantile ",
                                      dp.target_quantile, " from")
                       : std::string("clip"),
      dp.clip, dp.noise_multiplier, dp.sampling_rate, dp.delta,
      dp.target_epsilon > 0
          ? absl::StrCat(", target epsilon ", dp.target_epsilon)
          : "");
  return absl::OkStatus();
}

// Each board holds one descriptor: as many as the system lets this server.
void RaiseDescriptorLimit() {
  if (auto raised = runtime::RaiseFdLimit(); raised.ok()) {
    spdlog::info("{}; each board holds one descriptor", raised->Describe());
  } else {
    spdlog::warn("{}", std::string(raised.status().message()));
  }
}

// Resumes from the checkpoints, wires the coordinator's options, sinks and
// transport, and starts serving `job` as `config` says. A gateway's
// coordinator (tiers) relays each round's result to `relay_sink`; null:
// this server runs the job's rounds itself.
absl::StatusOr<std::unique_ptr<Serving>> StartServing(
    server::JobPlan job, ServerConfig config, server::RelaySink relay_sink,
    std::string script_source) {
  auto serving = std::make_unique<Serving>();
  server::ServerOptions& options = config.options;
  const bool relay = static_cast<bool>(relay_sink);
  ApplyPlan(job, std::move(relay_sink), options);
  RETURN_IF_ERROR(CheckServerOptions(options));
  RETURN_IF_ERROR(ApplyMode(options.coordinator));
  RETURN_IF_ERROR(ApplyPrivacy(DpOptionsFromFlags(), job.model->State(),
                               options.coordinator));
  if (options.coordinator.planning.data_moves) {
    spdlog::warn(
        "data moves are on: training samples of clients that allow it may "
        "move between them through this server (trusted clusters only)");
  }
  checkpoint::StoreOptions store_options;
  store_options.keep = config.checkpoint_keep;
  serving->store = std::make_unique<checkpoint::CheckpointStore>(
      config.output + "/checkpoints", checkpoint::FileSystem::Default(),
      store_options);
  serving->plan = job.plan;
  serving->script_source = std::move(script_source);
  // An evaluate-only job continues no training job and leaves no
  // checkpoint one would continue.
  const bool evaluate_only = options.coordinator.evaluate_only;
  if (config.resume && !evaluate_only) {
    ASSIGN_OR_RETURN(options.restore, ResumeFrom(*serving->store, job.plan));
  }
  RETURN_IF_ERROR(LoadWeights(absl::GetFlag(FLAGS_weights), *job.model));
  ASSIGN_OR_RETURN(
      serving->metrics,
      server::MetricsLog::Open(
          config.output, options.restore ? options.restore->history
                                         : std::vector<server::RoundReport>{}));
  const runtime::NamedTensors initial = job.model->State();
  server::Evaluator evaluator = MakeEvaluator(job);
  ASSIGN_OR_RETURN(
      security::ServerTransport transport,
      security::MakeServerTransport(config.transport, absl::Now()));
  serving->revoked = std::move(transport.revoked);
  options.credentials = transport.credentials;
  options.access = transport.access;
  if (!evaluate_only) {
    options.snapshot_sink = CheckpointSink(serving->store.get(), job.plan);
  }
  server::MetricsLog* log = serving->metrics.get();
  options.coordinator.refused_board_sink = [log](const std::string& name,
                                                 const std::string& reason) {
    log->WriteRefusedBoard(name, reason);
  };
  serving->rounds = relay ? 0 : options.coordinator.rounds;
  auto figures = std::make_shared<server::ServerMetrics>();
  RaiseDescriptorLimit();
  auto started = server::FederationServer::Start(
      options, initial, evaluator, RoundSink(log, figures, serving->rounds));
  if (!started.ok()) {
    return absl::UnavailableError(std::string(started.status().message()));
  }
  serving->server = *std::move(started);
  // Scripts wait for this file to find the port: whole or absent.
  RETURN_IF_ERROR(checkpoint::WriteFileAtomically(
      checkpoint::FileSystem::Default(), config.output + "/server.addr",
      absl::StrCat(serving->server->address(), "\n")));
  spdlog::info("fedberry-server listening on {}, {} ({}, output {})",
               serving->server->address(), transport.description,
               relay ? absl::StrCat("a site gateway of ", config.upstream, ", ",
                                    job.plan.model_name())
                     : absl::StrCat(options.coordinator.rounds, " rounds of ",
                                    options.coordinator.train.model()),
               config.output);
  RETURN_IF_ERROR(
      StartWatches(*serving, figures, config.metrics_listen,
                   {options.coordinator.job_id, job.plan.model_name(),
                    options.coordinator.strategy.name}));
  return serving;
}

// SIGHUP re-reads the revocation list.
void ReloadRevoked(security::RevocationList* revoked) {
  if (revoked == nullptr) {
    spdlog::info("SIGHUP: no --revoked file to re-read");
    return;
  }
  spdlog::info("SIGHUP: re-reading {}", revoked->path());
  (void)revoked->Reload();
}

// Stops serving and writes the final model (and the trained TorchScript
// module). Returns the exit code.
int Finish(Serving& serving, bool signalled) {
  serving.server->Stop();
  const std::string output = absl::GetFlag(FLAGS_output);
  server::RoundCoordinator& coordinator = serving.server->coordinator();
  const auto history = coordinator.history();
  if (absl::Status s =
          SaveModel(*coordinator.global_model(), output + "/global_model.pt");
      !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 1;
  }
  if (absl::GetFlag(FLAGS_evaluate_only)) {
    spdlog::info(
        "evaluate-only job ended; the boards' figures are in "
        "{}/rounds.jsonl and clients.jsonl",
        output);
    return signalled ? 130 : 0;
  }
  spdlog::info("job ended after {} rounds{}; {} model in {}/global_model.pt",
               history.size(),
               serving.rounds > 0 ? absl::StrCat(" of ", serving.rounds) : "",
               serving.rounds > 0 ? "global" : "this gateway's last", output);
  if (serving.plan.model_format() == runtime::kTorchScriptFormat) {
    // The user's module with the trained weights: torch.jit.load() in Python.
    const std::string script = output + "/global_model.script.pt";
    if (absl::Status s = runtime::SaveTorchScriptWithState(
            serving.script_source, *coordinator.global_model(), script);
        s.ok()) {
      spdlog::info("the trained TorchScript module is in {}", script);
    } else {
      spdlog::error("{}", std::string(s.message()));
    }
  }
  return signalled ? 130 : 0;
}

// The job's own rounds, on the plan the flags give.
int RunJob() {
  const std::string output = absl::GetFlag(FLAGS_output);
  // The plan first: a model or data that does not fit fails here, before
  // any board joins.
  torch::manual_seed(absl::GetFlag(FLAGS_seed));
  auto plan_request = PlanRequestFromFlags(output);
  if (!plan_request.ok()) {
    spdlog::error("{}", std::string(plan_request.status().message()));
    return 2;
  }
  auto job = server::BuildJobPlan(*plan_request);
  if (!job.ok()) {
    spdlog::error("{}", std::string(job.status().message()));
    return 2;
  }
  for (const auto& w : job->warnings) spdlog::warn("{}", w);
  spdlog::info("plan: {}", runtime::DescribePlan(job->plan));
  auto serving = StartServing(*std::move(job), ServerConfigFromFlags(), nullptr,
                              absl::GetFlag(FLAGS_model));
  if (!serving.ok()) {
    spdlog::error("{}", std::string(serving.status().message()));
    return ExitCodeOf(serving.status());
  }
  server::FederationServer* server = (*serving)->server.get();
  ShutdownSignal signal(
      [server](int sig) {
        spdlog::warn("signal {} received: stopping the job", sig);
        server->Stop();
      },
      [revoked = (*serving)->revoked.get()] { ReloadRevoked(revoked); });
  server->Wait();
  return Finish(**serving, signal.received());
}

// How a site gateway joins its parent: as one board named by
// --upstream_name, else its certificate, else its host.
client::AgentOptions GatewayAgentOptions(
    const security::ClientTransport& transport, const std::string& output) {
  client::AgentOptions options;
  options.device = client::ToDeviceInfo(
      runtime::ReadDeviceFacts(runtime::ProcFiles::Real()));
  options.name = absl::GetFlag(FLAGS_upstream_name);
  if (options.name.empty()) {
    options.name = !transport.certificate_name.empty()
                       ? transport.certificate_name
                       : absl::StrCat("gateway-", options.device.hostname());
  }
  options.model_cache_dir = output + "/cache";
  options.probe_transport = transport.probe;
  options.seed = absl::GetFlag(FLAGS_seed);
  return options;
}

// A site gateway (tiers): joins the parent at --upstream as one board and
// runs each of the parent's rounds with its own boards, on the parent's
// plan.
int RunGateway() {
  const std::string output = absl::GetFlag(FLAGS_output);
  if (!absl::GetFlag(FLAGS_trainable).empty()) {
    spdlog::error(
        "--trainable is the job's setting: give it to the top server; a "
        "gateway (--upstream) trains what its parent's plan says");
    return 2;
  }
  auto transport = security::MakeClientTransport(
      {absl::GetFlag(FLAGS_upstream),
       {absl::GetFlag(FLAGS_upstream_tls_ca),
        absl::GetFlag(FLAGS_upstream_tls_cert),
        absl::GetFlag(FLAGS_upstream_tls_key),
        absl::GetFlag(FLAGS_upstream_tls_server_name)},
       absl::GetFlag(FLAGS_insecure)},
      wire::ClientChannelArguments(), absl::Now());
  if (!transport.ok()) {
    spdlog::error("--upstream: {}", std::string(transport.status().message()));
    return 2;
  }
  std::unique_ptr<Serving> serving;  // set on the agent's thread, once
  std::atomic<security::RevocationList*> revoked{nullptr};  // for SIGHUP
  tiers::GatewayOptions gateway;
  gateway.min_boards = std::max(1, absl::GetFlag(FLAGS_min_clients_to_start));
  // The root's differential privacy, task by task (none: as before).
  auto site_privacy = std::make_shared<tiers::SitePrivacy>();
  tiers::GatewayTrainer trainer(
      gateway,
      [&](const v1::TrainingPlan& plan, const runtime::VerifiedModelFile* file,
          server::RelaySink sink) -> absl::StatusOr<server::RoundCoordinator*> {
        ASSIGN_OR_RETURN(server::JobPlan job,
                         server::JobPlanFromParent(plan, file));
        for (const auto& w : job.warnings) spdlog::warn("{}", w);
        spdlog::info("the parent's plan: {}", runtime::DescribePlan(plan));
        ServerConfig config = ServerConfigFromFlags();
        tiers::ForwardClippedSums(site_privacy, config.options.coordinator);
        ASSIGN_OR_RETURN(
            serving,
            StartServing(std::move(job), std::move(config), std::move(sink),
                         file != nullptr ? file->path() : ""));
        revoked = serving->revoked.get();
        return &serving->server->coordinator();
      },
      site_privacy);
  const client::AgentOptions agent_options =
      GatewayAgentOptions(*transport, output);
  client::ClientAgent agent(agent_options, trainer,
                            v1::Federation::NewStub(transport->channel));
  spdlog::info("site gateway '{}': joining {} ({})", agent_options.name,
               absl::GetFlag(FLAGS_upstream), transport->description);
  ShutdownSignal signal(
      [&](int sig) {
        spdlog::warn("signal {} received: stopping the gateway", sig);
        agent.Stop();
        trainer.Stop();
      },
      [&revoked] { ReloadRevoked(revoked.load()); });
  const absl::Status done = agent.Run();
  if (!serving) {
    spdlog::error("the gateway never served: {}", done.ToString());
    return signal.received() ? 130 : 1;
  }
  if (done.ok()) {
    spdlog::info(
        "the parent says the job is done; telling this gateway's "
        "boards");
    trainer.JobDone();
    serving->server->Wait();
  } else if (!signal.received()) {
    spdlog::error("the link to the parent ended: {}", done.ToString());
  }
  const int code = Finish(*serving, signal.received());
  return done.ok() || signal.received() ? code : 1;
}

int Run() {
  // Before LibTorch's first operation (FEDBERRY_KERNELS).
  if (auto kernels = runtime::UseComputeKernelsFromEnvironment();
      !kernels.ok()) {
    spdlog::error("{}", std::string(kernels.status().message()));
    return 2;
  }
  if (auto gate =
          server::VersionGate::Parse(absl::GetFlag(FLAGS_min_client_version));
      !gate.ok()) {
    spdlog::error("{}", std::string(gate.status().message()));
    return 2;
  }
  runtime::SetComputeThreads(absl::GetFlag(FLAGS_threads));
  spdlog::info("compute: {}", runtime::DescribeComputeKernels());
  return absl::GetFlag(FLAGS_upstream).empty() ? RunJob() : RunGateway();
}

}  // namespace

int main(int argc, char** argv) {
  fedberry::runtime::TuneHeapForServing();  // before anything allocates much
  fedberry::runtime::SkipMutexDeadlockChecks();
  fedberry::ParseCommandLine(
      argc, argv,
      "fedberry aggregation server: runs FedAvg rounds for clients that dial "
      "in, training a built-in model or the user's TorchScript file.\n"
      "Usage: fedberry-server --listen=0.0.0.0:50051 --tls_cert=server.crt "
      "--tls_key=server.key --client_ca=fleet-ca.crt --rounds=5 "
      "--output=out\n"
      "       fedberry-server --model=model.pt --eval_data=csv:test.csv "
      "--label_column=target --optimizer=adam --lr=0.01 ...\n"
      "       fedberry-server --upstream=central:50051 --listen=0.0.0.0:50051 "
      "...   (a site gateway of a parent server)",
      "server_main");
  // Before gRPC's and the driver's threads start, so a signal reaches the
  // ShutdownSignal made after them instead of killing the process.
  BlockShutdownSignals();
  return Run();
}
