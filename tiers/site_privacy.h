// What a site gateway knows of its root's differential privacy, one parent
// task at a time (tiers). A root under DP puts its settings in every task's
// config (TrainConfig.dp_clip, dp_sampling_rate, dp_local_noise_multiplier);
// the gateway's boards get that config and clip as the root's own boards
// do, the gateway draws them with the root's q (SiteCohorts), sums their
// clipped updates without noise (ClippedSumBudget) and forwards the sum
// with its counts. This is the state those parts share: the trainer sets
// the task's settings before offering it, the round reads them and leaves
// its counts here. Thread-safe.
#ifndef FEDBERRY_TIERS_SITE_PRIVACY_H_
#define FEDBERRY_TIERS_SITE_PRIVACY_H_

#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "fedberry/v1/federation.pb.h"

namespace fedberry::tiers {

// The root's DP settings for one of its tasks.
struct SiteRound {
  std::string task_id;
  double clip = 0;           // each board's bound this round
  double sampling_rate = 0;  // the root's q; 0: the root runs without DP
  bool local = false;        // the boards add the noise (--dp_local)
  // The gateway forwards a clipped sum rather than a weighted mean.
  bool forwards() const { return sampling_rate > 0 && clip > 0; }
};

// What a round of the gateway summed for a task.
struct SiteSum {
  std::string task_id;
  int updates = 0;
  int clipped = 0;  // reached the bound
};

class SitePrivacy {
 public:
  // The parent's task `task_id`, asking `config`, runs next.
  void Begin(const std::string& task_id, const v1::TrainConfig& config);
  SiteRound round() const;
  // A round summed `sum` for its task.
  void Summed(const SiteSum& sum);
  // What the round of `task_id` summed; nullopt when none did.
  std::optional<SiteSum> summed(const std::string& task_id) const;

 private:
  mutable absl::Mutex mu_;
  SiteRound round_ ABSL_GUARDED_BY(mu_);
  std::optional<SiteSum> sum_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::tiers

#endif  // FEDBERRY_TIERS_SITE_PRIVACY_H_
