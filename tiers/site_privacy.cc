#include "tiers/site_privacy.h"

namespace fedberry::tiers {

void SitePrivacy::Begin(const std::string& task_id,
                        const v1::TrainConfig& config) {
  absl::MutexLock lock(&mu_);
  round_.task_id = task_id;
  round_.clip = config.dp_clip();
  round_.sampling_rate = config.dp_sampling_rate();
  round_.local = config.dp_local_noise_multiplier() > 0;
  sum_.reset();
}

SiteRound SitePrivacy::round() const {
  absl::MutexLock lock(&mu_);
  return round_;
}

void SitePrivacy::Summed(const SiteSum& sum) {
  absl::MutexLock lock(&mu_);
  sum_ = sum;
}

std::optional<SiteSum> SitePrivacy::summed(const std::string& task_id) const {
  absl::MutexLock lock(&mu_);
  if (!sum_ || sum_->task_id != task_id) return std::nullopt;
  return sum_;
}

}  // namespace fedberry::tiers
