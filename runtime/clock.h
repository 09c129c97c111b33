// A clock seam: code that measures time or checks deadlines takes a Clock&
// so tests can drive it with SimulatedClock instead of waiting.
// (Abseil 20220623 has no absl::Clock; this mirrors its shape.)
// Thread-safe: both implementations may be used from several threads.
#ifndef FEDBERRY_RUNTIME_CLOCK_H_
#define FEDBERRY_RUNTIME_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fedberry {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // The process-wide real clock.
  static Clock& Real();
};

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

#endif  // FEDBERRY_RUNTIME_CLOCK_H_
