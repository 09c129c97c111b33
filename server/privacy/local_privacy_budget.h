// Local differential privacy as a round budget (--dp_local), for a gateway
// that is not trusted: every board clips its update and adds Gaussian noise
// of noise_multiplier x clip itself (TrainConfig.dp_local_noise_multiplier),
// and the server averages what arrives (AddGaussianNoise in local mode: no
// second clip, no noise of its own). The guarantee is each board's own:
// every round it takes part in is one Gaussian mechanism on its whole data,
// where any two data sets of the board give updates up to 2 x clip apart
// (replacement), i.e. a noise multiplier of z / 2, with no amplification by
// sampling (the board knows it was asked). The budget counts the rounds
// each board took part in and reports the most any board spent; the
// counts are in the federation checkpoint. With a target epsilon the job
// ends before a round that could take a board beyond it.
// Thread-safety: as RoundBudget's (one call at a time).
#ifndef FEDBERRY_SERVER_PRIVACY_LOCAL_PRIVACY_BUDGET_H_
#define FEDBERRY_SERVER_PRIVACY_LOCAL_PRIVACY_BUDGET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "server/privacy/dp_options.h"
#include "server/privacy/gaussian_sum.h"
#include "server/round/round_budget.h"

namespace fedberry::server {

class LocalPrivacyBudget final : public RoundBudget {
 public:
  // `options` checked by CheckDpOptions, with `local` set.
  explicit LocalPrivacyBudget(const DpOptions& options);

  std::unique_ptr<Strategy> Aggregate(std::unique_ptr<Strategy> rule) override;
  void Shape(v1::TrainConfig& train) const override;
  std::string EndsBefore() const override;
  void Charge(RoundReport& report) override;
  std::string State() const override;
  absl::Status Restore(const std::string& state) override;

  // A board's epsilon after taking part in `rounds` rounds.
  double EpsilonAfter(int64_t rounds) const;
  // The most rounds one board took part in.
  int64_t most_rounds() const;

 private:
  const DpOptions options_;
  std::map<std::string, int64_t> rounds_;  // by board name
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PRIVACY_LOCAL_PRIVACY_BUDGET_H_
