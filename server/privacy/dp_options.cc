#include "server/privacy/dp_options.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fedberry::server {
namespace {

absl::Status CheckRanges(const DpOptions& o) {
  if (!(o.clip > 0) || !std::isfinite(o.clip)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dp_clip must be a positive L2 norm bound on each board's update "
        "when --dp_noise_multiplier is set; got ",
        o.clip));
  }
  if (!(o.noise_multiplier > 0) || !std::isfinite(o.noise_multiplier)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dp_noise_multiplier must be positive when --dp_clip is set (a "
        "clip without noise protects nothing); got ",
        o.noise_multiplier));
  }
  if (!(o.sampling_rate > 0 && o.sampling_rate <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fraction is the sampling rate q under DP: it must be in (0, 1]; "
        "got ",
        o.sampling_rate));
  }
  if (!(o.delta > 0 && o.delta < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dp_delta must be in (0, 1); got ", o.delta));
  }
  if (o.adaptive_clip &&
      (!(o.target_quantile > 0 && o.target_quantile < 1) ||
       !(o.clip_learning_rate > 0) || !std::isfinite(o.clip_learning_rate) ||
       !(o.clipped_count_stddev >= 0))) {
    return absl::InvalidArgumentError(
        "--dp_adaptive_clip needs --dp_target_quantile in (0, 1), "
        "--dp_clip_learning_rate > 0 and --dp_clipped_count_stddev >= 0");
  }
  if (o.adaptive_clip && o.clipped_count_stddev > 0 &&
      o.noise_multiplier >= 2 * o.clipped_count_stddev) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dp_clipped_count_stddev=", o.clipped_count_stddev,
        " is too low for the total --dp_noise_multiplier=", o.noise_multiplier,
        ": it must exceed half of it (or leave it 0 for the default)"));
  }
  if (o.local && o.adaptive_clip) {
    return absl::InvalidArgumentError(
        "--dp_adaptive_clip needs the server's noisy count of clipped "
        "updates; with --dp_local the boards' noisy updates hide their norms: "
        "use a fixed --dp_clip");
  }
  if (!(o.target_epsilon >= 0) || !std::isfinite(o.target_epsilon)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dp_target_epsilon must be >= 0 (0: no target); got ",
                     o.target_epsilon));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckDpOptions(const DpOptions& options,
                            const std::string& strategy,
                            const runtime::NamedTensors& model,
                            int parameter_count) {
  if (!options.enabled()) return absl::OkStatus();
  if (absl::Status s = CheckRanges(options); !s.ok()) return s;
  if (strategy != "fedavg" && strategy != "fedprox" && strategy != "fedadam" &&
      strategy != "fedyogi" && strategy != "fedadagrad") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--strategy=", strategy,
        " does not combine with differential privacy: it looks at single "
        "updates, whose noise-free values the guarantee hides; use fedavg, "
        "fedprox or a server optimizer (fedadam, fedyogi, fedadagrad)"));
  }
  int floating = 0;
  for (const auto& t : model) {
    if (t.tensor.is_floating_point()) ++floating;
  }
  if (parameter_count >= 0 && floating > parameter_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model has ", floating - parameter_count,
        " floating buffer(s) (batch norm statistics?): they are computed "
        "from a board's data but are not parameters, so differential "
        "privacy cannot bound them; use a model without batch norm (e.g. "
        "group norm)"));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::server
