#include "tiers/site_cohorts.h"

#include <utility>

namespace fedberry::tiers {

server::Cohort SiteCohorts::Choose(std::vector<std::string> available,
                                   std::mt19937_64& rng) const {
  const std::vector<uint32_t> boards(available.size(), 0);
  return Choose(std::move(available), boards, rng);
}

server::Cohort SiteCohorts::Choose(std::vector<std::string> available,
                                   const std::vector<uint32_t>& boards,
                                   std::mt19937_64& rng) const {
  const SiteRound round = privacy_->round();
  if (!round.forwards()) {
    return otherwise_->Choose(std::move(available), boards, rng);
  }
  return server::PoissonCohorts(round.sampling_rate)
      .Choose(std::move(available), boards, rng);
}

}  // namespace fedberry::tiers
