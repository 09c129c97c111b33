#include "base/clock.h"

namespace fedberry {
namespace {
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
};
}  // namespace

Clock& Clock::Real() {
  static RealClock* clock = new RealClock;
  return *clock;
}

}  // namespace fedberry
