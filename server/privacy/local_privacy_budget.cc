#include "server/privacy/local_privacy_budget.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "privacy/rdp_accountant.h"

namespace fedberry::server {

LocalPrivacyBudget::LocalPrivacyBudget(const DpOptions& options)
    : options_(options) {}

std::unique_ptr<Strategy> LocalPrivacyBudget::Aggregate(
    std::unique_ptr<Strategy> rule) {
  return AddGaussianNoise(std::move(rule), options_, nullptr);
}

void LocalPrivacyBudget::Shape(v1::TrainConfig& train) const {
  train.set_dp_clip(options_.clip);
  train.set_dp_local_noise_multiplier(options_.noise_multiplier);
  train.set_dp_sampling_rate(options_.sampling_rate);
}

double LocalPrivacyBudget::EpsilonAfter(int64_t rounds) const {
  if (rounds <= 0) return 0;
  privacy::RdpAccountant accountant;
  // Replacement: updates up to 2C apart under noise zC, i.e. z / 2.
  absl::StatusOr<privacy::PrivacySpent> spent =
      accountant.Compose(1.0, options_.noise_multiplier / 2, rounds).ok()
          ? accountant.Spent(options_.delta)
          : absl::InternalError("not composed");
  return spent.ok() ? spent->epsilon : std::numeric_limits<double>::infinity();
}

int64_t LocalPrivacyBudget::most_rounds() const {
  int64_t most = 0;
  for (const auto& [name, n] : rounds_) most = std::max(most, n);
  return most;
}

std::string LocalPrivacyBudget::EndsBefore() const {
  if (options_.target_epsilon <= 0) return "";
  const double after = EpsilonAfter(most_rounds() + 1);
  if (after <= options_.target_epsilon) return "";
  return absl::StrFormat(
      "one more round could take a board to epsilon %.4g at delta %g "
      "(local DP), beyond --dp_target_epsilon=%g",
      after, options_.delta, options_.target_epsilon);
}

void LocalPrivacyBudget::Charge(RoundReport& report) {
  int clipped = 0;
  // A site gateway counts under its own name: each of its boards took part
  // in at most the rounds it did, so its count bounds theirs.
  for (const ClientRoundReport& c : report.clients) {
    ++rounds_[c.client_name];
    if (c.metrics.update_clipped()) ++clipped;
  }
  PrivacyFigures p;
  p.local = true;
  p.steps = most_rounds();
  p.epsilon = EpsilonAfter(p.steps);
  p.delta = options_.delta;
  p.sampling_rate = options_.sampling_rate;
  p.noise_multiplier = options_.noise_multiplier;
  p.clip = options_.clip;
  // As the boards said: their updates arrive noised, norms hidden.
  if (!report.clients.empty()) {
    p.clipped_fraction = static_cast<double>(clipped) / report.clients.size();
  }
  report.privacy = p;
}

std::string LocalPrivacyBudget::State() const {
  return nlohmann::json{{"local", true}, {"rounds", rounds_}}.dump();
}

absl::Status LocalPrivacyBudget::Restore(const std::string& state) {
  if (state.empty()) return absl::OkStatus();  // a job without DP so far
  nlohmann::json j = nlohmann::json::parse(state, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.value("local", false) ||
      !j.contains("rounds") || !j["rounds"].is_object()) {
    return absl::InvalidArgumentError(
        "the privacy budget's record is not a local-DP one (a job started "
        "under central DP cannot go on under --dp_local)");
  }
  std::map<std::string, int64_t> rounds;
  for (const auto& [name, n] : j["rounds"].items()) {
    if (!n.is_number_integer() || n.get<int64_t>() < 0) {
      return absl::InvalidArgumentError(
          "the privacy budget's record holds a round count that is not a "
          "non-negative integer");
    }
    rounds[name] = n.get<int64_t>();
  }
  rounds_ = std::move(rounds);
  return absl::OkStatus();
}

}  // namespace fedberry::server
