#include "runtime/periodic_sampler.h"

namespace fedberry::runtime {

PeriodicSampler::PeriodicSampler(absl::Duration interval,
                                 std::function<void()> sample, Clock& clock)
    : interval_(interval), sample_(std::move(sample)), clock_(clock) {
  if (interval_ > absl::ZeroDuration() && sample_) {
    thread_ = std::thread([this] { Loop(); });
  }
}

PeriodicSampler::~PeriodicSampler() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;  // wakes the wait below as the lock is released
  }
  if (thread_.joinable()) thread_.join();
}

void PeriodicSampler::Loop() {
  absl::Time next = clock_.Now() + interval_;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      clock_.AwaitWithDeadline(mu_, absl::Condition(&stop_), next);
      if (stop_) return;
    }
    sample_();
    // Fixed rate, but never a burst of catch-up samples after a stall.
    next = std::max(next + interval_, clock_.Now());
  }
}

}  // namespace fedberry::runtime
