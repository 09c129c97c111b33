// A clock that only moves when told to: the test side of the Clock seam.
// Thread-safe.
#ifndef FEDBERRY_BASE_TESTING_SIMULATED_CLOCK_H_
#define FEDBERRY_BASE_TESTING_SIMULATED_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry {

// A clock that only moves when told to.
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

 private:
  absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace fedberry

#endif  // FEDBERRY_BASE_TESTING_SIMULATED_CLOCK_H_
