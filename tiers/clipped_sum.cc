#include "tiers/clipped_sum.h"

#include <utility>

#include "base/status_macros.h"
#include "server/privacy/difference_sum.h"
#include "server/privacy/forwarded_sum.h"
#include "server/privacy/gaussian_sum.h"
#include "server/strategy/strategy_decorator.h"
#include "tiers/site_cohorts.h"

namespace fedberry::tiers {
namespace {

class ClippedSumRound : public server::RoundDecorator {
 public:
  ClippedSumRound(std::unique_ptr<server::RoundAggregator> rule,
                  std::shared_ptr<const runtime::NamedTensors> global,
                  SiteRound round, std::shared_ptr<SitePrivacy> privacy)
      : RoundDecorator(std::move(rule)),
        sum_(std::move(global)),
        round_(std::move(round)),
        privacy_(std::move(privacy)) {}

  // Sample counts play no part: under DP a board's weight would reveal its
  // data's size, and the root divides by its expected cohort.
  absl::Status Add(const runtime::NamedTensors& update,
                   double /*weight*/) override {
    FEDBERRY_ASSIGN_OR_RETURN(const double norm, sum_.Norm(update));
    const bool clip = !round_.local && norm > round_.clip;
    sum_.Add(update, clip ? round_.clip / norm : 1.0);
    ++updates_;
    if (!round_.local && norm >= server::kClipReached * round_.clip) {
      ++clipped_;
    }
    return absl::OkStatus();
  }
  // A securely aggregated round's unmasked sum of its boards' clipped
  // updates (the boards clipped; the session counted who reached the
  // bound): added as one sum, within updates x the bound.
  absl::Status AddSum(const runtime::NamedTensors& sum, int updates,
                      int clipped) override {
    if (round_.local) {
      return absl::InvalidArgumentError(
          "a sum of noisy updates has no bound to check (local DP)");
    }
    FEDBERRY_RETURN_IF_ERROR(
        server::AddBoundedSum(sum_, sum, updates, round_.clip));
    updates_ += updates;
    clipped_ += clipped;
    return absl::OkStatus();
  }
  int updates() const override { return updates_; }

  // The parent's model plus the sum, in the model's dtypes; integer
  // tensors keep the parent's values. No noise: the root adds it once.
  absl::StatusOr<runtime::NamedTensors> Result() override {
    if (updates_ == 0) {
      return absl::FailedPreconditionError("the round has no update");
    }
    runtime::NamedTensors next = sum_.Over(1.0);
    privacy_->Summed({round_.task_id, updates_, clipped_});
    return next;
  }

 private:
  server::DifferenceSum sum_;  // of the clipped updates
  const SiteRound round_;
  const std::shared_ptr<SitePrivacy> privacy_;
  int updates_ = 0;
  int clipped_ = 0;
};

class ClippedSumStrategy : public server::StrategyDecorator {
 public:
  ClippedSumStrategy(std::unique_ptr<server::Strategy> rule,
                     std::shared_ptr<SitePrivacy> privacy)
      : StrategyDecorator(std::move(rule)), privacy_(std::move(privacy)) {}

  absl::StatusOr<std::unique_ptr<server::RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    FEDBERRY_ASSIGN_OR_RETURN(std::unique_ptr<server::RoundAggregator> round,
                              rule().BeginRound(global));
    const SiteRound settings = privacy_->round();
    if (!settings.forwards()) {
      return std::make_unique<server::RoundDecorator>(std::move(round));
    }
    return std::make_unique<ClippedSumRound>(
        std::move(round), std::move(global), settings, privacy_);
  }

 private:
  const std::shared_ptr<SitePrivacy> privacy_;
};

}  // namespace

std::unique_ptr<server::Strategy> ClippedSumBudget::Aggregate(
    std::unique_ptr<server::Strategy> rule) {
  return std::make_unique<ClippedSumStrategy>(std::move(rule), privacy_);
}

void ForwardClippedSums(std::shared_ptr<SitePrivacy> privacy,
                        server::CoordinatorOptions& c) {
  c.selection = std::make_shared<const SiteCohorts>(
      privacy, std::make_shared<const server::SharedCohorts>(
                   c.fraction, c.target_updates, c.over_select,
                   c.min_clients_per_round));
  c.budget = std::make_shared<ClippedSumBudget>(std::move(privacy));
}

}  // namespace fedberry::tiers
