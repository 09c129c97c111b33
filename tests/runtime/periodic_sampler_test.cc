// PeriodicSampler on a SimulatedClock: it samples when the clock says an
// interval has passed, and a stall costs one catch-up sample, not a burst.
#include "runtime/periodic_sampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "base/testing/simulated_clock.h"

namespace fedberry::runtime {
namespace {

// Waits (really, up to 10 s) until `count` reaches `n`.
bool Reaches(const std::atomic<int>& count, int n) {
  for (int i = 0; i < 10000 && count.load() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return count.load() >= n;
}

TEST(PeriodicSampler, SamplesWhenTheClockSaysAnIntervalPassed) {
  SimulatedClock clock;
  std::atomic<int> samples{0};
  PeriodicSampler sampler(
      absl::Seconds(1), [&samples] { ++samples; }, clock);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(samples.load(), 0);  // real time passing is not the clock's

  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(Reaches(samples, 1));
  // A 5 s stall: one sample at once, then the fixed rate from there.
  clock.Advance(absl::Seconds(5));
  EXPECT_TRUE(Reaches(samples, 3));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(samples.load(), 3);
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(Reaches(samples, 4));
}

TEST(PeriodicSampler, StopsWithoutTheClockMoving) {
  SimulatedClock clock;
  std::atomic<int> samples{0};
  {
    PeriodicSampler sampler(
        absl::Hours(1), [&samples] { ++samples; }, clock);
  }  // the destructor does not wait for the hour
  EXPECT_EQ(samples.load(), 0);
}

}  // namespace
}  // namespace fedberry::runtime
