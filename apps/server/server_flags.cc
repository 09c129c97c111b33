// fedberry-server's own flags, and ServerConfigFromFlags: the only place
// they are read (with those it shares with fedberry-sim,
// server_flags_shared.cc). Names, defaults and help texts are the command
// line's interface (scripts, systemd defaults and tests use them): keep them.
#include "apps/server/server_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "apps/server/server_args.h"
#include "apps/server/server_flags_shared.h"
#include "runtime/image_dataset.h"

ABSL_FLAG(std::string, listen, fedberry::apps::kDefaultServerListen,
          "Address to listen on; port 0 picks a free port (written to "
          "<output>/server.addr).");
ABSL_FLAG(int, rounds, 5, "Number of federated rounds.");
ABSL_FLAG(double, fraction, 1.0,
          "Share of available clients selected each round.");
ABSL_FLAG(int, min_clients, 2, "Minimum clients selected per round.");
ABSL_FLAG(int, min_clients_to_start, 2,
          "Available clients needed before a round opens.");
ABSL_FLAG(int, local_epochs, 1, "Local epochs per round (when local_steps=0).");
ABSL_FLAG(int, local_steps, 0, "Local batches per round; 0 = whole epochs.");
ABSL_FLAG(int, batch_size, 32, "Local batch size.");
ABSL_FLAG(double, lr, 0.05, "Local learning rate.");
ABSL_FLAG(double, momentum, 0.9, "Local SGD momentum (sgd only).");
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
ABSL_FLAG(absl::Duration, board_eval_deadline, absl::Minutes(2),
          "With --evaluate_on_boards: how long a round's report waits for "
          "boards that were asked to evaluate and have not answered.");
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
ABSL_FLAG(std::string, min_client_version, "",
          "The oldest fedberry-client release that may join (e.g. 0.2.0): "
          "an older board is refused at join and told to upgrade, and one "
          "restored from a checkpoint joins again and is told so. Empty: any "
          "release.");
ABSL_FLAG(std::string, site_gateways, "",
          "The site gateways (fedberry-server --upstream) that may join this "
          "server and forward their boards' updates, as a comma-separated "
          "list of names, each optionally with the most boards it may speak "
          "for (e.g. shed-gw,barn-gw:50). Under mutual TLS a name is one its "
          "certificate lists. A join that declares boards under any other "
          "name is refused. Empty: no site gateways.");
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
ABSL_FLAG(double, dp_clip_learning_rate, 0.2,
          "--dp_adaptive_clip: the bound moves by exp(-rate x (share within "
          "- target)) a round.");
ABSL_FLAG(double, dp_clipped_count_stddev, 0,
          "--dp_adaptive_clip: the noise on the count of updates within the "
          "bound; 0: 0.05 x the round's expected cohort, at least the noise "
          "multiplier. Must exceed half of --dp_noise_multiplier.");
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

namespace fedberry::apps {
namespace {

PlanConfig PlanConfigFromFlags() {
  PlanConfig p;
  p.model = absl::GetFlag(FLAGS_model);
  p.weights = absl::GetFlag(FLAGS_weights);
  p.lr = absl::GetFlag(FLAGS_lr);
  p.momentum = absl::GetFlag(FLAGS_momentum);
  p.local_epochs = absl::GetFlag(FLAGS_local_epochs);
  p.local_steps = absl::GetFlag(FLAGS_local_steps);
  p.batch_size = absl::GetFlag(FLAGS_batch_size);
  p.skip_bad_rows = absl::GetFlag(FLAGS_skip_bad_rows);
  p.eval_data = absl::GetFlag(FLAGS_eval_data);
  p.seed = absl::GetFlag(FLAGS_seed);
  return p;
}

RoundsConfig RoundsConfigFromFlags() {
  RoundsConfig r;
  r.rounds = absl::GetFlag(FLAGS_rounds);
  r.fraction = absl::GetFlag(FLAGS_fraction);
  r.min_clients = absl::GetFlag(FLAGS_min_clients);
  r.min_clients_to_start = absl::GetFlag(FLAGS_min_clients_to_start);
  r.round_deadline = absl::GetFlag(FLAGS_round_deadline);
  r.paused_grace = absl::GetFlag(FLAGS_paused_grace);
  r.overlap_evaluation = absl::GetFlag(FLAGS_overlap_evaluation);
  return r;
}

BoardEvalConfig BoardEvalConfigFromFlags() {
  BoardEvalConfig e;
  e.deadline = absl::GetFlag(FLAGS_board_eval_deadline);
  e.evaluate_only = absl::GetFlag(FLAGS_evaluate_only);
  return e;
}

PlannerConfig PlannerConfigFromFlags() {
  PlannerConfig p;
  p.planner = absl::GetFlag(FLAGS_planner);
  p.min_factor = absl::GetFlag(FLAGS_planner_min_factor);
  p.max_factor = absl::GetFlag(FLAGS_planner_max_factor);
  p.max_epochs = absl::GetFlag(FLAGS_planner_max_epochs);
  p.ilp_time_limit_seconds = absl::GetFlag(FLAGS_planner_ilp_time_limit);
  p.data_moves = absl::GetFlag(FLAGS_data_moves);
  p.data_move_wait = absl::GetFlag(FLAGS_data_move_wait);
  return p;
}

DpConfig DpConfigFromFlags() {
  DpConfig dp;
  dp.clip_learning_rate = absl::GetFlag(FLAGS_dp_clip_learning_rate);
  dp.clipped_count_stddev = absl::GetFlag(FLAGS_dp_clipped_count_stddev);
  return dp;
}

FleetConfig FleetConfigFromFlags() {
  FleetConfig f;
  f.min_client_version = absl::GetFlag(FLAGS_min_client_version);
  f.site_gateways = absl::GetFlag(FLAGS_site_gateways);
  f.max_clients = absl::GetFlag(FLAGS_max_clients);
  f.max_update_ratio = absl::GetFlag(FLAGS_max_update_ratio);
  f.max_samples_ratio = absl::GetFlag(FLAGS_max_samples_ratio);
  return f;
}

TransportConfig TransportConfigFromFlags() {
  TransportConfig t;
  t.transport = {absl::GetFlag(FLAGS_listen),
                 {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                  absl::GetFlag(FLAGS_client_ca)},
                 absl::GetFlag(FLAGS_revoked),
                 absl::GetFlag(FLAGS_insecure)};
  t.max_threads = absl::GetFlag(FLAGS_max_threads);
  t.max_transport_mib = absl::GetFlag(FLAGS_max_transport_mib);
  t.max_streams = absl::GetFlag(FLAGS_max_streams);
  t.max_inflight_updates = absl::GetFlag(FLAGS_max_inflight_updates);
  t.max_streams_per_caller = absl::GetFlag(FLAGS_max_streams_per_caller);
  t.stream_stall_time = absl::GetFlag(FLAGS_stream_stall_time);
  t.max_stream_time = absl::GetFlag(FLAGS_max_stream_time);
  return t;
}

GatewayConfig GatewayConfigFromFlags() {
  GatewayConfig g;
  g.link = {absl::GetFlag(FLAGS_upstream),
            {absl::GetFlag(FLAGS_upstream_tls_ca),
             absl::GetFlag(FLAGS_upstream_tls_cert),
             absl::GetFlag(FLAGS_upstream_tls_key),
             absl::GetFlag(FLAGS_upstream_tls_server_name)},
            absl::GetFlag(FLAGS_insecure)};
  g.name = absl::GetFlag(FLAGS_upstream_name);
  return g;
}

}  // namespace

ServerConfig ServerConfigFromFlags() {
  ServerConfig config;
  config.plan = PlanConfigFromFlags();
  config.rounds = RoundsConfigFromFlags();
  config.board_eval = BoardEvalConfigFromFlags();
  config.planner = PlannerConfigFromFlags();
  config.dp = DpConfigFromFlags();
  config.fleet = FleetConfigFromFlags();
  config.transport = TransportConfigFromFlags();
  config.output.dir = absl::GetFlag(FLAGS_output);
  config.output.checkpoint_keep = absl::GetFlag(FLAGS_checkpoint_keep);
  config.output.resume = absl::GetFlag(FLAGS_resume);
  config.gateway = GatewayConfigFromFlags();
  config.threads = absl::GetFlag(FLAGS_threads);
  ReadSharedServerFlags(config);
  return config;
}

}  // namespace fedberry::apps
