#include "server/round/cohort_selection.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fedberry::server {

Cohort SharedCohorts::Choose(std::vector<std::string> available,
                             std::mt19937_64& rng) const {
  const int n = static_cast<int>(available.size());
  // The updates that close the round, and the boards selected for them
  // (min_cohort is a floor on the cohort, not on the updates).
  int needed =
      target_updates_ > 0
          ? target_updates_
          : std::max(static_cast<int>(std::ceil(fraction_ * n)), min_cohort_);
  needed = std::clamp(needed, 1, n);
  int k = static_cast<int>(
      std::ceil(std::max(1.0, over_select_) * static_cast<double>(needed)));
  k = std::clamp(std::max(k, min_cohort_), needed, n);
  for (int i = 0; i < k; ++i) {
    int j = i + static_cast<int>(rng() % static_cast<uint64_t>(n - i));
    std::swap(available[i], available[j]);
  }
  available.resize(k);
  return Cohort{std::move(available), static_cast<size_t>(needed),
                static_cast<double>(k)};
}

Cohort PoissonCohorts::Choose(std::vector<std::string> available,
                              std::mt19937_64& rng) const {
  const std::vector<uint32_t> boards(available.size(), 0);
  return Choose(std::move(available), boards, rng);
}

Cohort PoissonCohorts::Choose(std::vector<std::string> available,
                              const std::vector<uint32_t>& boards,
                              std::mt19937_64& rng) const {
  Cohort cohort;
  double fleet = 0;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (size_t i = 0; i < available.size(); ++i) {
    const uint32_t gateway_boards = i < boards.size() ? boards[i] : 0;
    fleet += std::max<uint32_t>(1, gateway_boards);
    // A gateway is not drawn: its boards are, at the gateway.
    if (gateway_boards > 0 || coin(rng) < q_) {
      cohort.members.push_back(std::move(available[i]));
    }
  }
  cohort.expected = q_ * fleet;
  cohort.needed = cohort.members.size();
  return cohort;
}

}  // namespace fedberry::server
