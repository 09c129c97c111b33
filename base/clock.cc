#include "base/clock.h"

namespace fedberry {
namespace {
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepFor(absl::Duration d) override { absl::SleepFor(d); }
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                         absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu.AwaitWithDeadline(cond, deadline);
  }
};
}  // namespace

Clock& Clock::Real() {
  static RealClock* clock = new RealClock;
  return *clock;
}

}  // namespace fedberry
