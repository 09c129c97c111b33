// A site gateway's side of differential privacy (tiers): while its root
// runs under DP (SitePrivacy::round().forwards()), each round of the
// gateway sums its boards' updates, their differences from the parent's
// model each clipped to the round's bound (again: a board or an encoding
// may have sent more), unweighted and in float64, and adds no noise; its
// result is the parent's model plus that sum, and its counts go to the
// SitePrivacy for the trainer to forward. The root adds the noise once, to
// the total over its boards and gateways. Under local DP (the boards
// noised their updates) nothing is clipped: the sum is of noisy updates.
// Under a root without DP the gateway's rule (fedavg) runs as before.
// Thread-safety: as RoundBudget's and Strategy's.
#ifndef FEDBERRY_TIERS_CLIPPED_SUM_H_
#define FEDBERRY_TIERS_CLIPPED_SUM_H_

#include <memory>
#include <string>

#include "server/round/round_budget.h"
#include "server/round_coordinator.h"
#include "tiers/site_privacy.h"

namespace fedberry::tiers {

class ClippedSumBudget final : public server::RoundBudget {
 public:
  explicit ClippedSumBudget(std::shared_ptr<SitePrivacy> privacy)
      : privacy_(std::move(privacy)) {}
  std::unique_ptr<server::Strategy> Aggregate(
      std::unique_ptr<server::Strategy> rule) override;
  // The parent's config already carries the bound.
  void Shape(v1::TrainConfig&) const override {}
  // The root accounts; a gateway spends nothing of its own.
  std::string EndsBefore() const override { return ""; }
  void Charge(server::RoundReport&) override {}
  std::string State() const override { return ""; }
  absl::Status Restore(const std::string&) override { return absl::OkStatus(); }

 private:
  const std::shared_ptr<SitePrivacy> privacy_;
};

// A gateway's coordinator `c` follows its root's DP round by round: its
// cohorts through SiteCohorts (its own rule when the root runs without
// DP), its sums through ClippedSumBudget.
void ForwardClippedSums(std::shared_ptr<SitePrivacy> privacy,
                        server::CoordinatorOptions& c);

}  // namespace fedberry::tiers

#endif  // FEDBERRY_TIERS_CLIPPED_SUM_H_
