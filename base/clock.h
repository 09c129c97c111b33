// A clock seam: code that measures time, checks deadlines, sleeps or waits
// with a deadline takes a Clock& so tests can drive it with SimulatedClock
// (base/testing/) instead of waiting.
// (Abseil 20220623 has no absl::Clock; this mirrors its shape.)
// Thread-safe: both implementations may be used from several threads.
#ifndef FEDBERRY_BASE_CLOCK_H_
#define FEDBERRY_BASE_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fedberry {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // Lets `d` of this clock's time pass: a real sleep, or a simulated clock
  // moving forward by `d` at once.
  virtual void SleepFor(absl::Duration d) = 0;
  // With `mu` held: returns true once `cond` holds, false when this clock
  // reaches `deadline` first (`mu` is released while waiting, as in
  // absl::Mutex::AwaitWithDeadline).
  virtual bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                                 absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;
  // The process-wide real clock.
  static Clock& Real();
};

}  // namespace fedberry

#endif  // FEDBERRY_BASE_CLOCK_H_
