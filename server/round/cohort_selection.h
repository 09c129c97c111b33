// Who trains a round: the boards chosen among those available when it
// opens, and how many updates close it. Two rules:
//
//   SharedCohorts   a share of the available boards (--fraction, or
//                   --target_updates), over-selected (--over_select): a
//                   fixed-size cohort, drawn uniformly without replacement;
//   PoissonCohorts  every available board independently with probability q
//                   (differential privacy: the sampling its accountant
//                   assumes); the cohort's size varies, and a round's sum is
//                   divided by the expected size q * n, not the actual one.
//
// Both draw from the caller's generator only, so a cohort depends on (seed,
// round, attempt) and the boards available: a restarted server reopens a
// round with the same cohort. Thread-safety: const, thread-safe.
#ifndef FEDBERRY_SERVER_ROUND_COHORT_SELECTION_H_
#define FEDBERRY_SERVER_ROUND_COHORT_SELECTION_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fedberry::server {

struct Cohort {
  std::vector<std::string> members;  // client ids
  size_t needed = 0;     // updates that close the round (<= members)
  double expected = 0;   // the cohort's expected size
  bool too_few = false;  // too small to run (RoundKind::Draw says)
};

class CohortSelection {
 public:
  virtual ~CohortSelection() = default;
  // The cohort among `available` (non-empty, in a stable order).
  virtual Cohort Choose(std::vector<std::string> available,
                        std::mt19937_64& rng) const = 0;
  // The same, knowing how many boards each of `available` speaks for
  // (`boards`, one entry each: a site gateway's boards, 0 for a board).
  // A rule that counts boards, not callers, overrides it; the others ignore
  // `boards`.
  virtual Cohort Choose(std::vector<std::string> available,
                        const std::vector<uint32_t>& boards,
                        std::mt19937_64& rng) const {
    return Choose(std::move(available), rng);
  }
};

class SharedCohorts final : public CohortSelection {
 public:
  // `fraction` of the available boards, at least `min_cohort`; or
  // `target_updates` updates when > 0; `over_select` times as many boards
  // selected as updates needed (all when fewer are available).
  SharedCohorts(double fraction, int target_updates, double over_select,
                int min_cohort)
      : fraction_(fraction),
        target_updates_(target_updates),
        over_select_(over_select),
        min_cohort_(min_cohort) {}
  using CohortSelection::Choose;
  Cohort Choose(std::vector<std::string> available,
                std::mt19937_64& rng) const override;

 private:
  const double fraction_;
  const int target_updates_;
  const double over_select_;
  const int min_cohort_;
};

class PoissonCohorts final : public CohortSelection {
 public:
  explicit PoissonCohorts(double q) : q_(q) {}
  // Every member's update is needed (the close rule's deadline and quorum
  // still apply); the cohort may be empty.
  Cohort Choose(std::vector<std::string> available,
                std::mt19937_64& rng) const override;
  // Site gateways (boards > 0) are always members: each draws its own
  // boards with q (TrainConfig.dp_sampling_rate), so every board at every
  // tier joins with probability q, independently, as the accountant
  // assumes. The expected size counts their boards: q x (boards + the
  // gateways' boards).
  Cohort Choose(std::vector<std::string> available,
                const std::vector<uint32_t>& boards,
                std::mt19937_64& rng) const override;

 private:
  const double q_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_COHORT_SELECTION_H_
