#include "server/privacy/privacy_budget.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "server/json_number.h"

namespace fedberry::server {

PrivacyBudget::PrivacyBudget(const DpOptions& options) : options_(options) {
  clip_->clip = options.clip;
}

std::unique_ptr<Strategy> PrivacyBudget::Aggregate(
    std::unique_ptr<Strategy> rule) {
  return AddGaussianNoise(std::move(rule), options_, clip_);
}

void PrivacyBudget::Shape(v1::TrainConfig& train) const {
  train.set_dp_clip(clip_->clip);
  // A site gateway draws its boards with the root's q (boards ignore it).
  train.set_dp_sampling_rate(options_.sampling_rate);
}

std::string PrivacyBudget::EndsBefore() const {
  if (options_.target_epsilon <= 0) return "";
  absl::StatusOr<privacy::PrivacySpent> after = accountant_.SpentAfter(
      options_.sampling_rate, options_.noise_multiplier, options_.delta);
  if (after.ok() && after->epsilon <= options_.target_epsilon) return "";
  return absl::StrFormat(
      "one more round would spend epsilon %.4g at delta %g, beyond "
      "--dp_target_epsilon=%g (spent %.4g over %d rounds)",
      after.ok() ? after->epsilon : std::numeric_limits<double>::infinity(),
      options_.delta, options_.target_epsilon, epsilon(), accountant_.steps());
}

void PrivacyBudget::Charge(RoundReport& report) {
  if (absl::Status s = accountant_.Compose(options_.sampling_rate,
                                           options_.noise_multiplier);
      !s.ok()) {
    // Not expected: the options were checked at start.
    spdlog::error("privacy accountant: {}", s.ToString());
  }
  PrivacyFigures p;
  p.epsilon = epsilon();
  p.delta = options_.delta;
  p.steps = accountant_.steps();
  p.sampling_rate = options_.sampling_rate;
  p.noise_multiplier = options_.noise_multiplier;
  p.clip = clip_->clip;
  // The clip state is the last aggregated round's: this one's when it had
  // updates.
  if (report.participants > 0 && clip_->updates > 0) {
    p.clip = clip_->round_clip;
    p.clipped_fraction = static_cast<double>(clip_->clipped) / clip_->updates;
  }
  report.privacy = p;
}

double PrivacyBudget::epsilon() const {
  if (accountant_.steps() == 0) return 0;
  absl::StatusOr<privacy::PrivacySpent> spent =
      accountant_.Spent(options_.delta);
  return spent.ok() ? spent->epsilon : std::numeric_limits<double>::infinity();
}

std::string PrivacyBudget::State() const {
  nlohmann::json rdp = nlohmann::json::array();
  for (double v : accountant_.rdp()) rdp.push_back(Number(v));
  nlohmann::json orders = nlohmann::json::array();
  for (double v : accountant_.orders()) orders.push_back(v);
  return nlohmann::json{{"steps", accountant_.steps()},
                        {"orders", orders},
                        {"rdp", rdp},
                        {"clip", clip_->clip}}
      .dump();
}

absl::Status PrivacyBudget::Restore(const std::string& state) {
  // A checkpoint of a job that ran without DP: nothing was spent under it.
  if (state.empty()) return absl::OkStatus();
  nlohmann::json j = nlohmann::json::parse(state, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("steps") ||
      !j["steps"].is_number_integer() || !j.contains("rdp") ||
      !j["rdp"].is_array() || !j.contains("orders") ||
      !j["orders"].is_array()) {
    return absl::InvalidArgumentError(
        "the privacy budget's record is malformed (need steps, orders, rdp)");
  }
  std::vector<double> orders, rdp;
  double clip = options_.clip;  // absent: the job's fixed bound
  try {
    for (const auto& v : j["orders"]) orders.push_back(ReadNumber(v));
    for (const auto& v : j["rdp"]) rdp.push_back(ReadNumber(v));
    if (j.contains("clip")) clip = ReadNumber(j["clip"]);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the privacy budget's record holds a value that is not a number: ",
        e.what()));
  }
  if (!(clip > 0) || !std::isfinite(clip)) {
    return absl::InvalidArgumentError(
        "the privacy budget's clip bound is not a positive number");
  }
  FEDBERRY_RETURN_IF_ERROR(
      accountant_.Restore(orders, rdp, j["steps"].get<int64_t>()));
  clip_->clip = clip;
  return absl::OkStatus();
}

}  // namespace fedberry::server
