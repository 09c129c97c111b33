// Who trains a site gateway's round (tiers): under a root that runs
// differential privacy, every available board of the gateway independently
// with the root's probability q (TrainConfig.dp_sampling_rate), drawn once
// per parent round (UpstreamRound::draw_once), so each board at each site
// takes part with probability q as the root's accountant assumes; under a
// root without DP, the gateway's own rule (--fraction and the rest).
// Thread-safety: const, thread-safe.
#ifndef FEDBERRY_TIERS_SITE_COHORTS_H_
#define FEDBERRY_TIERS_SITE_COHORTS_H_

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "server/round/cohort_selection.h"
#include "tiers/site_privacy.h"

namespace fedberry::tiers {

class SiteCohorts final : public server::CohortSelection {
 public:
  SiteCohorts(std::shared_ptr<const SitePrivacy> privacy,
              std::shared_ptr<const server::CohortSelection> otherwise)
      : privacy_(std::move(privacy)), otherwise_(std::move(otherwise)) {}
  server::Cohort Choose(std::vector<std::string> available,
                        std::mt19937_64& rng) const override;
  server::Cohort Choose(std::vector<std::string> available,
                        const std::vector<uint32_t>& boards,
                        std::mt19937_64& rng) const override;

 private:
  const std::shared_ptr<const SitePrivacy> privacy_;
  const std::shared_ptr<const server::CohortSelection> otherwise_;
};

}  // namespace fedberry::tiers

#endif  // FEDBERRY_TIERS_SITE_COHORTS_H_
