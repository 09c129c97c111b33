// A clock seam: code that measures time or checks deadlines takes a Clock&
// so tests can drive it with SimulatedClock (base/testing/) instead of
// waiting.
// (Abseil 20220623 has no absl::Clock; this mirrors its shape.)
// Thread-safe: both implementations may be used from several threads.
#ifndef FEDBERRY_BASE_CLOCK_H_
#define FEDBERRY_BASE_CLOCK_H_

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

}  // namespace fedberry

#endif  // FEDBERRY_BASE_CLOCK_H_
