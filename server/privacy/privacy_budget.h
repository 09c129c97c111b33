// Differential privacy as a round budget (server/round/round_budget.h): the
// Gaussian mechanism around the job's strategy, the clip bound in every
// round's config, and the RDP accountant (privacy/rdp_accountant.h)
// charged one step of the Poisson-subsampled Gaussian mechanism for every
// round attempt that drew a cohort, whether its result was published or
// not. Its state (the RDP curve and the steps) is in the federation
// checkpoint, so a resumed job reports the epsilon an uninterrupted one
// would; so is the clip bound, which adaptive clipping moves. With a target
// epsilon the job ends before a round that would exceed it.
// Thread-safety: as RoundBudget's (one call at a time).
#ifndef FEDBERRY_SERVER_PRIVACY_PRIVACY_BUDGET_H_
#define FEDBERRY_SERVER_PRIVACY_PRIVACY_BUDGET_H_

#include <memory>
#include <string>

#include "privacy/rdp_accountant.h"
#include "server/privacy/dp_options.h"
#include "server/privacy/gaussian_sum.h"
#include "server/round/round_budget.h"

namespace fedberry::server {

class PrivacyBudget final : public RoundBudget {
 public:
  // `options` checked by CheckDpOptions.
  explicit PrivacyBudget(const DpOptions& options);

  std::unique_ptr<Strategy> Aggregate(std::unique_ptr<Strategy> rule) override;
  void Shape(v1::TrainConfig& train) const override;
  std::string EndsBefore() const override;
  void Charge(RoundReport& report) override;
  std::string State() const override;
  absl::Status Restore(const std::string& state) override;

  // The epsilon spent so far (0 before any round).
  double epsilon() const;
  // The next round's clip bound (moves under adaptive clipping).
  double clip() const { return clip_->clip; }

 private:
  const DpOptions options_;
  privacy::RdpAccountant accountant_;
  const std::shared_ptr<ClipState> clip_ = std::make_shared<ClipState>();
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PRIVACY_PRIVACY_BUDGET_H_
