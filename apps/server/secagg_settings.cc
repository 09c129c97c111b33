#include "apps/server/secagg_settings.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "apps/server/server_options.h"
#include "base/log_text.h"
#include "base/status_macros.h"

namespace fedberry::apps {
namespace {

bool On(const SecAggConfig& s) { return s.mode == "secagg+"; }

absl::Status CheckRanges(const SecAggConfig& s) {
  auto bad = [](const char* flag, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " ", why));
  };
  if (s.neighbours < 0) return bad("secagg_neighbours", "must be 0 or more");
  if (s.threshold < 0) return bad("secagg_threshold", "must be 0 or more");
  if (s.neighbours > 0 && s.threshold > s.neighbours) {
    return bad("secagg_threshold", absl::StrCat("(", s.threshold,
                                                ") must not exceed "
                                                "--secagg_neighbours (",
                                                s.neighbours, ")"));
  }
  if (!std::isfinite(s.clip) || s.clip <= 0) {
    return bad("secagg_clip", "must be finite and positive");
  }
  if (s.bits < 1 || s.bits > 32) return bad("secagg_bits", "must be 1..32");
  if (!(s.dropout_rate >= 0 && s.dropout_rate < 1)) {
    return bad("secagg_dropout_rate", "must be in [0, 1)");
  }
  if (!(s.corrupt_rate >= 0 && s.corrupt_rate < 1)) {
    return bad("secagg_corrupt_rate", "must be in [0, 1)");
  }
  if (s.stage_deadline <= absl::ZeroDuration()) {
    return bad("secagg_stage_deadline", "must be positive");
  }
  return absl::OkStatus();
}

// What secure aggregation does not combine with; null: nothing.
const char* Conflict(const ServerConfig& config) {
  const std::string rule = StrategyOptionsOf(config).name;
  return config.mode.mode == "async"
             ? "--mode=async (a session needs a cohort that starts "
               "together)"
         : rule == "median" || rule == "trimmed_mean" || rule == "krum" ||
                 rule == "multikrum"
             ? "--strategy=median, trimmed_mean, krum or multikrum (they "
               "need each board's update; the gateway learns only the sum: "
               "use fedavg, fedprox, fedavgm, fedadam, fedyogi or fedadagrad)"
         : config.plan.update_encoding == "topk"
             ? "--update_encoding=topk (each board's kept values differ, "
               "so masked sums would not line up)"
         : config.planner.data_moves
             ? "--data_moves (they show the gateway boards' samples)"
         : DpOptionsOf(config).enabled() && DpOptionsOf(config).local
             ? "--dp_local (each board's own noise would be clipped by the "
               "session's value bound; with secure aggregation use central "
               "DP: boards clip, the gateway adds the noise to the unmasked "
               "sum only)"
             : nullptr;
}

}  // namespace

absl::Status CheckSecAgg(const ServerConfig& config) {
  const SecAggConfig& s = config.secagg;
  if (s.mode != "off" && !On(s)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--secure_aggregation must be off or secagg+, not '",
                     base::Printable(s.mode), "'"));
  }
  FEDBERRY_RETURN_IF_ERROR(CheckRanges(s));
  if (!On(s)) return absl::OkStatus();
  if (const char* conflict = Conflict(config)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--secure_aggregation=secagg+ does not combine with ", conflict));
  }
  return absl::OkStatus();
}

absl::Status ApplySecAgg(const ServerConfig& config,
                         server::CoordinatorOptions& c) {
  FEDBERRY_RETURN_IF_ERROR(CheckSecAgg(config));
  const SecAggConfig& s = config.secagg;
  if (!On(s)) return absl::OkStatus();
  server::SecAggOptions o;
  o.neighbours = s.neighbours;
  o.threshold = s.threshold;
  o.clip = s.clip;
  o.bits = s.bits;
  o.dropout_rate = s.dropout_rate;
  o.corrupt_rate = s.corrupt_rate;
  o.stage_deadline = s.stage_deadline;
  // Mutual TLS: every board has a fleet key to sign its keys with.
  o.signed_keys = !config.transport.transport.tls.client_ca.empty();
  c.secagg = o;
  const bool dp = DpOptionsOf(config).enabled();
  spdlog::info(
      "secure aggregation (SecAgg+): boards clip {} and "
      "quantise into 2^{}; neighbours {}, threshold {} (0: chosen per cohort "
      "for dropout rate {:g}, corrupt rate {:g}); keys {}",
      dp ? std::string("to the round's L2 bound (--dp_clip, in place of "
                       "--secagg_clip), weigh 1, and the gateway adds the "
                       "noise to the unmasked sum")
         : absl::StrCat("to [-", s.clip, ", ", s.clip, "]"),
      s.bits, s.neighbours, s.threshold, s.dropout_rate, s.corrupt_rate,
      o.signed_keys ? "signed with the boards' fleet certificates"
                    : "unsigned (no mutual TLS)");
  return absl::OkStatus();
}

}  // namespace fedberry::apps
