#include "apps/server/server_checks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "apps/server/server_options.h"
#include "base/status_macros.h"
#include "server/fleet/site_gateways.h"
#include "server/planner/round_planner.h"
#include "server/round/staleness.h"

namespace fedberry::apps {

absl::Status CheckBoardEvalOptions(const ServerConfig& config) {
  const BoardEvalConfig& e = config.board_eval;
  if (!(e.evaluate_on_boards >= 0 && e.evaluate_on_boards < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--evaluate_on_boards is the share of each board's samples held out: "
        "it must be in [0, 1), not ",
        e.evaluate_on_boards));
  }
  if (e.every < 1 || e.deadline <= absl::ZeroDuration() ||
      e.personalize_steps < 0) {
    return absl::InvalidArgumentError(
        "need --board_eval_every >= 1, --board_eval_deadline > 0 and "
        "--personalize_steps >= 0");
  }
  if (e.evaluate_only && e.evaluate_on_boards == 0) {
    return absl::InvalidArgumentError(
        "--evaluate_only evaluates on the boards' held-out shares: give "
        "--evaluate_on_boards (the share a training job with this --seed "
        "held out, so the model never saw those samples)");
  }
  if (e.evaluate_on_boards == 0) {
    return e.personalize_steps == 0
               ? absl::OkStatus()
               : absl::InvalidArgumentError(
                     "--personalize_steps is measured on the boards' held-out "
                     "samples: it needs --evaluate_on_boards");
  }
  if (config.is_gateway()) {
    return absl::InvalidArgumentError(
        "--evaluate_on_boards is for the server that runs the job; a site "
        "gateway's boards are evaluated by no one (set it on the top server)");
  }
  if (config.planner.data_moves) {
    return absl::InvalidArgumentError(
        "--evaluate_on_boards and --data_moves do not combine: moved samples "
        "would mix training and held-out shares");
  }
  return absl::OkStatus();
}

namespace {

// The plain ranges: InvalidArgument listing them all.
absl::Status CheckRanges(const ServerConfig& config) {
  const RoundsConfig& r = config.rounds;
  const PlanConfig& p = config.plan;
  const FleetConfig& f = config.fleet;
  const TransportConfig& t = config.transport;
  if (r.rounds < 1 || p.batch_size < 1 || !(r.fraction > 0) || r.fraction > 1 ||
      !(f.max_update_ratio >= 0) || !(f.max_samples_ratio >= 0) ||
      f.max_clients < 1 || t.max_threads < 4 || t.max_inflight_updates < 0 ||
      r.target_updates < 0 || !(r.over_select >= 1) || r.over_select > 100 ||
      (p.local_epochs < 1 && p.local_steps < 1)) {
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

}  // namespace

absl::Status CheckServerOptions(const ServerConfig& config) {
  FEDBERRY_RETURN_IF_ERROR(CheckBoardEvalOptions(config));
  const RoundsConfig& r = config.rounds;
  if (config.planner.data_moves && config.plan.local_steps > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--data_moves plans whole epochs: use --local_steps=0 (got ",
        config.plan.local_steps, ")"));
  }
  // The smallest round that can close: its quorum of the fewest selected.
  const int min_updates = std::max(
      1, static_cast<int>(
             std::ceil(r.quorum * std::max(r.min_clients, r.target_updates))));
  if (absl::Status s = server::ValidateStrategyOptions(
          StrategyOptionsOf(config), min_updates);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid strategy settings: ", s.message()));
  }
  if (auto p =
          server::planner::RoundPlanner::Create(PlanningOf(config.planner));
      !p.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid planner settings: ", p.status().message()));
  }
  if (auto gateways = server::SiteGateways::Parse(config.fleet.site_gateways);
      !gateways.ok()) {
    return gateways.status();
  }
  return CheckRanges(config);
}

absl::Status CheckDpCombination(const ServerConfig& config) {
  const RoundsConfig& r = config.rounds;
  const char* conflict =
      config.is_gateway()
          ? "a site gateway's own --dp_* flags (set them on the root "
            "only: its settings reach this gateway's boards with each "
            "task, and noise and accounting happen at the root)"
      : config.planner.data_moves
          ? "--data_moves (moved samples leave their board)"
      : config.board_eval.evaluate_on_boards > 0
          ? "--evaluate_on_boards (each board's figures are released "
            "without noise)"
      : r.target_updates > 0 || r.over_select > 1
          ? "--target_updates or --over_select (the accountant assumes "
            "Poisson sampling: --fraction is each board's chance)"
          : nullptr;
  if (conflict == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("differential privacy does not combine with ", conflict));
}

namespace {

// What --mode=async does not combine with; null: nothing.
const char* AsyncConflict(const ServerConfig& config) {
  const std::string rule = StrategyOptionsOf(config).name;
  const RoundsConfig& r = config.rounds;
  return rule == "median" || rule == "trimmed_mean" || rule == "krum" ||
                 rule == "multikrum"
             ? "--strategy=median, trimmed_mean, krum or multikrum (they "
               "ignore weights, so a stale update would count in full; use "
               "fedavg, fedprox, fedadam, fedyogi or fedadagrad)"
         : DpOptionsOf(config).enabled()
             ? "differential privacy (its accountant assumes Poisson-sampled "
               "synchronous rounds)"
         : config.board_eval.evaluate_on_boards > 0 ||
                 config.board_eval.evaluate_only
             ? "--evaluate_on_boards or --evaluate_only (boards are training)"
         : config.planner.planner != "uniform" || config.planner.data_moves
             ? "--planner or --data_moves (they plan a synchronous cohort's "
               "work; each asynchronous task is the plan's)"
         : r.target_updates > 0 || r.over_select > 1 || r.fraction < 1
             ? "--fraction, --target_updates or --over_select (no cohort is "
               "drawn: --async_buffer sets the updates per version, "
               "--max_concurrency the boards training at once)"
             : nullptr;
}

}  // namespace

absl::Status CheckMode(const ServerConfig& config) {
  FEDBERRY_ASSIGN_OR_RETURN(std::optional<server::AsyncOptions> async,
                            AsyncOptionsOf(config));
  if (!async) return absl::OkStatus();
  if (const char* conflict = AsyncConflict(config); conflict != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode=async does not combine with ", conflict));
  }
  return absl::OkStatus();
}

absl::Status ApplyMode(const ServerConfig& config,
                       server::CoordinatorOptions& c) {
  FEDBERRY_RETURN_IF_ERROR(CheckMode(config));
  FEDBERRY_ASSIGN_OR_RETURN(c.async, AsyncOptionsOf(config));
  if (!c.async) return absl::OkStatus();
  const server::AsyncOptions& a = *c.async;
  spdlog::info(
      "asynchronous rounds: a version every {} updates, staleness weight {}, "
      "max staleness {}, {}",
      a.buffer, server::StalenessWeightingName(a.weighting), a.max_staleness,
      a.max_concurrency > 0
          ? absl::StrCat("at most ", a.max_concurrency, " boards training")
          : std::string("every board that asks trains"));
  return absl::OkStatus();
}

}  // namespace fedberry::apps
