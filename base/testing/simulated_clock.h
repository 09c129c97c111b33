// A clock that only moves when told to: the test side of the Clock seam.
// Thread-safe.
#ifndef FEDBERRY_BASE_TESTING_SIMULATED_CLOCK_H_
#define FEDBERRY_BASE_TESTING_SIMULATED_CLOCK_H_

#include <algorithm>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry {

// A clock that only moves when told to: by Advance, or by SleepFor, which
// moves it instead of sleeping.
class SimulatedClock : public Clock {
 public:
  explicit SimulatedClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  // Returns at once, `d` later on this clock.
  void SleepFor(absl::Duration d) override {
    Advance(std::max(d, absl::ZeroDuration()));
  }
  // Waits (really) until `cond` holds or another thread advances this
  // clock to `deadline`: the clock is looked at every millisecond, since an
  // Advance cannot wake a waiter on the caller's mutex.
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                         absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    while (!cond.Eval()) {
      if (Now() >= deadline) return false;
      mu.AwaitWithTimeout(cond, absl::Milliseconds(1));
    }
    return true;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace fedberry

#endif  // FEDBERRY_BASE_TESTING_SIMULATED_CLOCK_H_
