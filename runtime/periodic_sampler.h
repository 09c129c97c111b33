// Runs a callback every `interval` on its own thread until destroyed; the
// client uses it to call ResourceMonitor::Sample() during training. The
// default interval (kDefaultSampleInterval) is what bench/ measures the
// overhead of. Time comes from the injected Clock (a SimulatedClock in
// tests).
// Thread-safety: construct and destroy on one thread; the callback runs on
// the sampler's thread and must be thread-safe with respect to its owner.
#ifndef FEDBERRY_RUNTIME_PERIODIC_SAMPLER_H_
#define FEDBERRY_RUNTIME_PERIODIC_SAMPLER_H_

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry::runtime {

inline constexpr absl::Duration kDefaultSampleInterval = absl::Seconds(1);

class PeriodicSampler {
 public:
  // Starts sampling; an interval <= 0 starts nothing (sampling off).
  PeriodicSampler(absl::Duration interval, std::function<void()> sample,
                  Clock& clock = Clock::Real());
  ~PeriodicSampler();  // stops and joins the thread
  PeriodicSampler(const PeriodicSampler&) = delete;
  PeriodicSampler& operator=(const PeriodicSampler&) = delete;

 private:
  void Loop();

  const absl::Duration interval_;
  const std::function<void()> sample_;
  Clock& clock_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_PERIODIC_SAMPLER_H_
