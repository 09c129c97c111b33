// Everything fedberry-server's command line says, as one value
// (apps/server/server_flags.h reads it), for RunJob and RunGateway. Plain
// values without LibTorch; server_options.h turns them into the library's
// options. The defaults are the flags'.
// Thread-safety: a plain value.
#ifndef FEDBERRY_APPS_SERVER_SERVER_CONFIG_H_
#define FEDBERRY_APPS_SERVER_SERVER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "security/transport.h"

namespace fedberry::apps {

// The job's plan: model, data, local training, encodings.
struct PlanConfig {
  std::string model = "lenet5";  // built-in name or a TorchScript file
  std::string weights;           // a global_model.pt; empty: the model's
  std::string task = "classification";
  std::string loss;  // empty: the model's, else by task
  std::string optimizer = "sgd";
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 0;
  int local_epochs = 1;
  int local_steps = 0;  // 0: whole epochs
  int batch_size = 32;
  // As given: parsed when the plan is built, since a gateway takes its
  // parent's plan and never reads them.
  std::string input_shape;
  std::string input_mean;
  std::string input_std;
  uint32_t num_outputs = 0;  // 0: the evaluation data's
  std::string label_column;
  std::vector<std::string> feature_columns;  // empty: all but the label
  bool skip_bad_rows = false;
  // --eval_data; its flag defaults to Fashion-MNIST's folder.
  std::string eval_data;
  std::string trainable;  // a regular expression; empty: everything
  std::string update_encoding = "raw";
  double topk_fraction = 0.01;
  std::string model_encoding = "raw";
  uint64_t seed = 1;
};

// Rounds and the rule that closes them.
struct RoundsConfig {
  int rounds = 5;
  double fraction = 1.0;
  int min_clients = 2;
  int min_clients_to_start = 2;
  double quorum = 0.5;
  absl::Duration round_deadline = absl::Minutes(10);
  absl::Duration paused_grace = absl::Minutes(5);
  int target_updates = 0;  // 0: every selected board
  double over_select = 1.0;
  bool overlap_evaluation = true;
};

// --mode and the asynchronous rounds' settings, checked by CheckMode.
struct ModeConfig {
  std::string mode = "sync";  // sync or async
  int async_buffer = 10;
  std::string staleness_weight = "polynomial";
  int max_staleness = 10;
  int max_concurrency = 0;  // 0: every board that asks
};

// Secure aggregation (--secure_aggregation and --secagg_*), checked by
// CheckSecAgg.
struct SecAggConfig {
  std::string mode = "off";  // off or secagg+
  int neighbours = 0;
  int threshold = 0;
  double clip = 0.5;
  int bits = 32;
  double dropout_rate = 0.1;
  double corrupt_rate = 0.1;
  absl::Duration stage_deadline = absl::Seconds(60);
};

// Evaluation on the boards' held-out shares.
struct BoardEvalConfig {
  double evaluate_on_boards = 0;  // the share held out; 0: off
  int every = 1;
  absl::Duration deadline = absl::Minutes(2);
  int personalize_steps = 0;
  bool evaluate_only = false;
};

// How local work is spread over a round's clients.
struct PlannerConfig {
  std::string planner = "uniform";  // uniform, greedy or ilp
  double min_factor = 0.0;
  double max_factor = 4.0;
  int max_epochs = 0;
  double ilp_time_limit_seconds = 1.0;
  bool data_moves = false;
  absl::Duration data_move_wait = absl::Minutes(2);
};

// How a round's updates become the next model.
struct StrategyConfig {
  std::string name = "fedavg";
  double proximal_mu = 0;
  double server_lr = 1.0;
  double beta1 = 0.5;
  double beta2 = 0.99;
  double tau = 1.0;
  double trim_fraction = 0.1;
  int byzantine = 0;
  int krum_keep = 0;
};

// Differential privacy (--dp_*); its sampling rate is --fraction.
struct DpConfig {
  double noise_multiplier = 0;  // 0: off
  double clip = 0;
  bool adaptive_clip = false;
  bool local = false;
  double target_quantile = 0.5;
  double clip_learning_rate = 0.2;
  double clipped_count_stddev = 0;
  double delta = 1e-5;
  double target_epsilon = 0;  // 0: run every round
  uint64_t noise_seed = 0;    // 0: the system's entropy
};

// Who may join and what their updates may do.
struct FleetConfig {
  std::string min_client_version;  // empty: any release
  std::string site_gateways;       // name[:max_boards],...; empty: none
  int max_clients = 10000;
  double max_update_ratio = 1000;  // 0: no bound
  double max_samples_ratio = 10;   // 0: no bound
};

// The boards' transport and the bounds on what they may hold of it.
struct TransportConfig {
  security::ServerTransportOptions transport;  // --listen, TLS, --insecure
  std::string metrics_listen;                  // empty: no /metrics
  int metrics_max_connections = 64;            // its listener's, in all
  int metrics_max_connections_per_ip = 16;     // and from one address
  int max_threads = 2048;
  int max_transport_mib = 256;
  int max_streams = 32;
  int max_inflight_updates = 16;
  int max_streams_per_caller = 4;
  absl::Duration stream_stall_time = absl::Seconds(30);
  absl::Duration max_stream_time = absl::Minutes(10);
};

// Where the job's files go and whether it continues from them.
struct OutputConfig {
  std::string dir = "fedberry-out";  // --output
  int checkpoint_keep = 3;
  bool resume = true;
};

// A site gateway's link to its parent (tiers); `link.server` empty: this
// server runs its own job.
struct GatewayConfig {
  security::ClientTransportOptions link;  // --upstream, --upstream_tls_*
  std::string name;                       // --upstream_name
};

struct ServerConfig {
  PlanConfig plan;
  RoundsConfig rounds;
  ModeConfig mode;
  SecAggConfig secagg;
  BoardEvalConfig board_eval;
  PlannerConfig planner;
  StrategyConfig strategy;
  DpConfig dp;
  FleetConfig fleet;
  TransportConfig transport;
  OutputConfig output;
  GatewayConfig gateway;
  int threads = 0;  // LibTorch threads for evaluation; 0: the default

  bool is_gateway() const { return !gateway.link.server.empty(); }
};

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_CONFIG_H_
