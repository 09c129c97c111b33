#include "runtime/periodic_sampler.h"

namespace fedberry::runtime {

PeriodicSampler::PeriodicSampler(absl::Duration interval,
                                 std::function<void()> sample)
    : interval_(interval), sample_(std::move(sample)) {
  if (interval_ > absl::ZeroDuration() && sample_) {
    thread_ = std::thread([this] { Loop(); });
  }
}

PeriodicSampler::~PeriodicSampler() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    wake_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void PeriodicSampler::Loop() {
  absl::Time next = absl::Now() + interval_;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      while (!stop_ && absl::Now() < next) wake_.WaitWithDeadline(&mu_, next);
      if (stop_) return;
    }
    sample_();
    // Fixed rate, but never a burst of catch-up samples after a stall.
    next = std::max(next + interval_, absl::Now());
  }
}

}  // namespace fedberry::runtime
