#include "apps/server/server_options.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "server/fleet/site_gateways.h"
#include "server/fleet/version_gate.h"
#include "server/round/staleness.h"

namespace fedberry::apps {

server::StrategyOptions StrategyOptionsOf(const ServerConfig& config) {
  server::StrategyOptions s;
  if (config.is_gateway()) return s;
  const StrategyConfig& c = config.strategy;
  s.name = c.name;
  s.proximal_mu = c.proximal_mu;
  s.server_lr = c.server_lr;
  s.beta1 = c.beta1;
  s.beta2 = c.beta2;
  s.tau = c.tau;
  s.trim_fraction = c.trim_fraction;
  s.byzantine = c.byzantine;
  s.krum_keep = c.krum_keep;
  s.spill_dir = config.output.dir + "/spill";
  return s;
}

namespace {

// The strategy's own settings, as the plan records them.
std::map<std::string, double> StrategyParameters(const StrategyConfig& s) {
  if (s.name == "fedadam" || s.name == "fedyogi" || s.name == "fedadagrad") {
    std::map<std::string, double> p = {
        {"server_lr", s.server_lr}, {"beta1", s.beta1}, {"tau", s.tau}};
    if (s.name != "fedadagrad") p["beta2"] = s.beta2;
    return p;
  }
  if (s.name == "trimmed_mean") return {{"trim_fraction", s.trim_fraction}};
  if (s.name == "krum" || s.name == "multikrum") {
    std::map<std::string, double> p = {{"byzantine", s.byzantine}};
    if (s.name == "multikrum") p["krum_keep"] = s.krum_keep;
    return p;
  }
  return {};
}

}  // namespace

absl::StatusOr<server::JobPlanRequest> PlanRequestOf(
    const ServerConfig& config) {
  const PlanConfig& p = config.plan;
  server::JobPlanRequest r;
  r.model = p.model;
  r.task = p.task;
  r.loss = p.loss;
  r.optimizer = p.optimizer;
  r.learning_rate = p.lr;
  r.momentum = p.momentum;
  r.weight_decay = p.weight_decay;
  FEDBERRY_ASSIGN_OR_RETURN(r.input_shape,
                            server::ParseShape(p.input_shape, "input_shape"));
  r.num_outputs = p.num_outputs;
  FEDBERRY_ASSIGN_OR_RETURN(r.input_mean,
                            server::ParseFloats(p.input_mean, "input_mean"));
  FEDBERRY_ASSIGN_OR_RETURN(r.input_std,
                            server::ParseFloats(p.input_std, "input_std"));
  r.label_column = p.label_column;
  r.feature_columns = p.feature_columns;
  r.strategy = config.strategy.name;
  r.proximal_mu = config.strategy.proximal_mu;
  r.strategy_parameters = StrategyParameters(config.strategy);
  r.update_encoding = p.update_encoding;
  r.topk_fraction = p.topk_fraction;
  r.model_encoding = p.model_encoding;
  r.trainable = p.trainable;
  r.eval_data = p.eval_data;
  r.skip_bad_rows = p.skip_bad_rows;
  r.cache_dir = config.output.dir + "/cache";
  return r;
}

namespace {

// Rounds, cohorts and the close rule.
void SetRounds(const ServerConfig& config, server::CoordinatorOptions& c) {
  const RoundsConfig& r = config.rounds;
  c.rounds = r.rounds;
  c.fraction = r.fraction;
  c.target_updates = r.target_updates;
  c.over_select = r.over_select;
  c.min_clients_per_round = r.min_clients;
  c.min_clients_to_start = r.min_clients_to_start;
  c.quorum = r.quorum;
  c.round_deadline = r.round_deadline;
  c.paused_grace = r.paused_grace;
  c.overlap_evaluation = r.overlap_evaluation;
}

}  // namespace

server::planner::RoundPlanOptions PlanningOf(const PlannerConfig& p) {
  server::planner::RoundPlanOptions planning;
  planning.planner = p.planner;
  planning.min_factor = p.min_factor;
  planning.max_factor = p.max_factor;
  planning.max_epochs = p.max_epochs;
  planning.ilp_time_limit_seconds = p.ilp_time_limit_seconds;
  planning.data_moves = p.data_moves;
  return planning;
}

server::CoordinatorOptions CoordinatorOptionsOf(const ServerConfig& config) {
  server::CoordinatorOptions c;
  SetRounds(config, c);
  c.upstream = config.is_gateway();
  // Checked before serving (server_main's Run): a malformed version never
  // gets here.
  c.version_gate = server::VersionGate::Parse(config.fleet.min_client_version)
                       .value_or(server::VersionGate());
  c.site_gateways = server::SiteGateways::Parse(config.fleet.site_gateways)
                        .value_or(server::SiteGateways());
  c.seed = config.plan.seed;
  c.train.set_local_epochs(config.plan.local_epochs);
  c.train.set_local_steps(config.plan.local_steps);
  c.train.set_batch_size(config.plan.batch_size);
  c.train.set_learning_rate(config.plan.lr);
  c.train.set_momentum(config.plan.momentum);
  c.planning = PlanningOf(config.planner);
  c.data_move_wait = config.planner.data_move_wait;
  c.max_update_ratio = config.fleet.max_update_ratio;
  c.max_samples_ratio = config.fleet.max_samples_ratio;
  c.max_clients = config.fleet.max_clients;
  const BoardEvalConfig& e = config.board_eval;
  c.board_eval.holdout_fraction = e.evaluate_on_boards;
  c.board_eval.every = e.every;
  c.board_eval.deadline = e.deadline;
  c.board_eval.personalize_steps = e.personalize_steps;
  c.evaluate_only = e.evaluate_only;
  c.strategy = StrategyOptionsOf(config);
  return c;
}

server::ServerOptions ServerOptionsOf(const ServerConfig& config) {
  const TransportConfig& t = config.transport;
  server::ServerOptions o;
  o.listen = t.transport.listen;
  o.coordinator = CoordinatorOptionsOf(config);
  o.max_threads = t.max_threads;
  o.max_transport_bytes = static_cast<size_t>(std::max(0, t.max_transport_mib))
                          << 20;
  o.max_streams = t.max_streams;
  o.max_inflight_updates = t.max_inflight_updates;
  o.max_stream_time = t.max_stream_time;
  o.stream_stall_time = t.stream_stall_time;
  o.max_streams_per_caller = t.max_streams_per_caller;
  return o;
}

server::DpOptions DpOptionsOf(const ServerConfig& config) {
  const DpConfig& c = config.dp;
  server::DpOptions dp;
  dp.clip = c.clip;
  dp.noise_multiplier = c.noise_multiplier;
  dp.sampling_rate = config.rounds.fraction;
  dp.delta = c.delta;
  dp.target_epsilon = c.target_epsilon;
  dp.noise_seed = c.noise_seed;
  dp.adaptive_clip = c.adaptive_clip;
  dp.local = c.local;
  dp.target_quantile = c.target_quantile;
  dp.clip_learning_rate = c.clip_learning_rate;
  dp.clipped_count_stddev = c.clipped_count_stddev;
  return dp;
}

absl::StatusOr<std::optional<server::AsyncOptions>> AsyncOptionsOf(
    const ServerConfig& config) {
  const ModeConfig& m = config.mode;
  if (m.mode == "sync") return std::nullopt;
  if (m.mode != "async") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mode must be sync or async, not '", base::Printable(m.mode), "'"));
  }
  server::AsyncOptions a;
  FEDBERRY_ASSIGN_OR_RETURN(
      a.weighting, server::ParseStalenessWeighting(m.staleness_weight));
  a.buffer = m.async_buffer;
  a.max_staleness = m.max_staleness;
  a.max_concurrency = m.max_concurrency;
  FEDBERRY_RETURN_IF_ERROR(server::CheckAsyncOptions(a));
  return a;
}

}  // namespace fedberry::apps
