#include "apps/server/server_args.h"

#include "absl/time/time.h"
#include "base/flag_args.h"
#include "runtime/image_dataset.h"

namespace fedberry::apps {
namespace {

using Args = base::FlagArgs;

// The plan's flags that fedberry-sim passes through, then the rest of it
// but the encodings and --trainable.
void AddPlan(const PlanConfig& p, const PlanConfig& b, Args& a) {
  a.Add("optimizer", p.optimizer, b.optimizer);
  a.Add("loss", p.loss, b.loss);
  a.Add("task", p.task, b.task);
  a.Add("weight_decay", p.weight_decay, b.weight_decay);
  a.Add("input_shape", p.input_shape, b.input_shape);
  a.Add("num_outputs", p.num_outputs, b.num_outputs);
  a.Add("input_mean", p.input_mean, b.input_mean);
  a.Add("input_std", p.input_std, b.input_std);
  a.Add("label_column", p.label_column, b.label_column);
  a.Add("feature_columns", p.feature_columns, b.feature_columns);
  a.Add("model", p.model, b.model);
  a.Add("weights", p.weights, b.weights);
  a.Add("lr", p.lr, b.lr);
  a.Add("momentum", p.momentum, b.momentum);
  a.Add("local_epochs", p.local_epochs, b.local_epochs);
  a.Add("local_steps", p.local_steps, b.local_steps);
  a.Add("batch_size", p.batch_size, b.batch_size);
  a.Add("skip_bad_rows", p.skip_bad_rows, b.skip_bad_rows);
  a.Add("eval_data", p.eval_data, b.eval_data);
  a.Add("seed", p.seed, b.seed);
}

void AddStrategy(const StrategyConfig& s, const StrategyConfig& b, Args& a) {
  a.Add("strategy", s.name, b.name);
  a.Add("proximal_mu", s.proximal_mu, b.proximal_mu);
  a.Add("server_lr", s.server_lr, b.server_lr);
  a.Add("beta1", s.beta1, b.beta1);
  a.Add("beta2", s.beta2, b.beta2);
  a.Add("tau", s.tau, b.tau);
  a.Add("trim_fraction", s.trim_fraction, b.trim_fraction);
  a.Add("byzantine", s.byzantine, b.byzantine);
  a.Add("krum_keep", s.krum_keep, b.krum_keep);
}

// How rounds close (the passed-through flags first), and --mode's group.
void AddRounds(const ServerConfig& c, const ServerConfig& b, Args& a) {
  const RoundsConfig& r = c.rounds;
  a.Add("target_updates", r.target_updates, b.rounds.target_updates);
  a.Add("over_select", r.over_select, b.rounds.over_select);
  a.Add("quorum", r.quorum, b.rounds.quorum);
  a.Add("rounds", r.rounds, b.rounds.rounds);
  a.Add("fraction", r.fraction, b.rounds.fraction);
  a.Add("min_clients", r.min_clients, b.rounds.min_clients);
  a.Add("min_clients_to_start", r.min_clients_to_start,
        b.rounds.min_clients_to_start);
  a.Add("round_deadline", r.round_deadline, b.rounds.round_deadline);
  a.Add("paused_grace", r.paused_grace, b.rounds.paused_grace);
  a.Add("overlap_evaluation", r.overlap_evaluation,
        b.rounds.overlap_evaluation);
  const ModeConfig& m = c.mode;
  a.Add("mode", m.mode, b.mode.mode);
  a.Add("async_buffer", m.async_buffer, b.mode.async_buffer);
  a.Add("staleness_weight", m.staleness_weight, b.mode.staleness_weight);
  a.Add("max_staleness", m.max_staleness, b.mode.max_staleness);
  a.Add("max_concurrency", m.max_concurrency, b.mode.max_concurrency);
}

// The encodings, evaluation on the boards and differential privacy.
void AddEncodingsEvalDp(const ServerConfig& c, const ServerConfig& b, Args& a) {
  a.Add("update_encoding", c.plan.update_encoding, b.plan.update_encoding);
  a.Add("topk_fraction", c.plan.topk_fraction, b.plan.topk_fraction);
  a.Add("model_encoding", c.plan.model_encoding, b.plan.model_encoding);
  const BoardEvalConfig& e = c.board_eval;
  a.Add("evaluate_on_boards", e.evaluate_on_boards,
        b.board_eval.evaluate_on_boards);
  a.Add("board_eval_every", e.every, b.board_eval.every);
  a.Add("personalize_steps", e.personalize_steps,
        b.board_eval.personalize_steps);
  a.Add("board_eval_deadline", e.deadline, b.board_eval.deadline);
  a.Add("evaluate_only", e.evaluate_only, b.board_eval.evaluate_only);
  const DpConfig& dp = c.dp;
  a.Add("dp_noise_multiplier", dp.noise_multiplier, b.dp.noise_multiplier);
  a.Add("dp_clip", dp.clip, b.dp.clip);
  a.Add("dp_delta", dp.delta, b.dp.delta);
  a.Add("dp_adaptive_clip", dp.adaptive_clip, b.dp.adaptive_clip);
  a.Add("dp_target_quantile", dp.target_quantile, b.dp.target_quantile);
  a.Add("dp_local", dp.local, b.dp.local);
  a.Add("dp_target_epsilon", dp.target_epsilon, b.dp.target_epsilon);
  a.Add("dp_noise_seed", dp.noise_seed, b.dp.noise_seed);
  a.Add("dp_clip_learning_rate", dp.clip_learning_rate,
        b.dp.clip_learning_rate);
  a.Add("dp_clipped_count_stddev", dp.clipped_count_stddev,
        b.dp.clipped_count_stddev);
}

void AddPlannerAndFleet(const ServerConfig& c, const ServerConfig& b, Args& a) {
  const PlannerConfig& p = c.planner;
  a.Add("planner", p.planner, b.planner.planner);
  a.Add("planner_min_factor", p.min_factor, b.planner.min_factor);
  a.Add("planner_max_factor", p.max_factor, b.planner.max_factor);
  a.Add("planner_max_epochs", p.max_epochs, b.planner.max_epochs);
  a.Add("planner_ilp_time_limit", p.ilp_time_limit_seconds,
        b.planner.ilp_time_limit_seconds);
  a.Add("data_moves", p.data_moves, b.planner.data_moves);
  a.Add("data_move_wait", p.data_move_wait, b.planner.data_move_wait);
  const FleetConfig& f = c.fleet;
  a.Add("min_client_version", f.min_client_version, b.fleet.min_client_version);
  a.Add("site_gateways", f.site_gateways, b.fleet.site_gateways);
  a.Add("max_clients", f.max_clients, b.fleet.max_clients);
  a.Add("max_update_ratio", f.max_update_ratio, b.fleet.max_update_ratio);
  a.Add("max_samples_ratio", f.max_samples_ratio, b.fleet.max_samples_ratio);
}

void AddTransport(const TransportConfig& t, const TransportConfig& b, Args& a) {
  const security::ServerTransportOptions& o = t.transport;
  a.Add("listen", o.listen, b.transport.listen);
  a.Add("tls_cert", o.tls.cert, b.transport.tls.cert);
  a.Add("tls_key", o.tls.key, b.transport.tls.key);
  a.Add("client_ca", o.tls.client_ca, b.transport.tls.client_ca);
  a.Add("revoked", o.revoked, b.transport.revoked);
  a.Add("insecure", o.insecure, b.transport.insecure);
  a.Add("max_threads", t.max_threads, b.max_threads);
  a.Add("max_transport_mib", t.max_transport_mib, b.max_transport_mib);
  a.Add("max_streams", t.max_streams, b.max_streams);
  a.Add("max_inflight_updates", t.max_inflight_updates, b.max_inflight_updates);
  a.Add("max_streams_per_caller", t.max_streams_per_caller,
        b.max_streams_per_caller);
  a.Add("stream_stall_time", t.stream_stall_time, b.stream_stall_time);
  a.Add("max_stream_time", t.max_stream_time, b.max_stream_time);
}

void AddOutputAndGateway(const ServerConfig& c, const ServerConfig& b,
                         Args& a) {
  a.Add("output", c.output.dir, b.output.dir);
  a.Add("checkpoint_keep", c.output.checkpoint_keep, b.output.checkpoint_keep);
  a.Add("resume", c.output.resume, b.output.resume);
  const security::ClientTransportOptions& l = c.gateway.link;
  const security::ClientTransportOptions& bl = b.gateway.link;
  a.Add("upstream", l.server, bl.server);
  a.Add("upstream_name", c.gateway.name, b.gateway.name);
  a.Add("upstream_tls_ca", l.tls.ca, bl.tls.ca);
  a.Add("upstream_tls_cert", l.tls.cert, bl.tls.cert);
  a.Add("upstream_tls_key", l.tls.key, bl.tls.key);
  a.Add("upstream_tls_server_name", l.tls.server_name, bl.tls.server_name);
  a.Add("threads", c.threads, b.threads);
}

}  // namespace

ServerConfig ServerFlagDefaults() {
  ServerConfig config;
  config.plan.eval_data = runtime::kDefaultFashionMnistDir;
  config.transport.transport.listen = kDefaultServerListen;
  return config;
}

std::vector<std::string> ServerArgsFrom(const ServerConfig& config) {
  const ServerConfig base = ServerFlagDefaults();
  std::vector<std::string> argv;
  Args a(argv);
  AddPlan(config.plan, base.plan, a);
  AddStrategy(config.strategy, base.strategy, a);
  AddRounds(config, base, a);
  AddEncodingsEvalDp(config, base, a);
  a.Add("trainable", config.plan.trainable, base.plan.trainable);
  a.Add("metrics_listen", config.transport.metrics_listen,
        base.transport.metrics_listen);
  a.Add("metrics_max_connections", config.transport.metrics_max_connections,
        base.transport.metrics_max_connections);
  a.Add("metrics_max_connections_per_ip",
        config.transport.metrics_max_connections_per_ip,
        base.transport.metrics_max_connections_per_ip);
  AddPlannerAndFleet(config, base, a);
  AddTransport(config.transport, base.transport, a);
  AddOutputAndGateway(config, base, a);
  return argv;
}

}  // namespace fedberry::apps
