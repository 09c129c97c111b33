#include "base/clock.h"

#include <gtest/gtest.h>

#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/testing/simulated_clock.h"

namespace fedberry::clock_test {
namespace {

TEST(SimulatedClock, SleepForMovesItInsteadOfSleeping) {
  SimulatedClock clock;
  const absl::Time start = clock.Now();
  const absl::Time real_start = absl::Now();
  clock.SleepFor(absl::Hours(1));
  EXPECT_EQ(clock.Now() - start, absl::Hours(1));
  EXPECT_LT(absl::Now() - real_start, absl::Minutes(1));
}

TEST(SimulatedClock, AwaitReturnsOnceTheConditionHolds) {
  SimulatedClock clock;
  absl::Mutex mu;
  bool done = false;
  std::thread setter([&] {
    absl::MutexLock lock(&mu);
    done = true;
  });
  {
    absl::MutexLock lock(&mu);
    // No Advance: only the condition can end this wait.
    EXPECT_TRUE(clock.AwaitWithDeadline(mu, absl::Condition(&done),
                                        clock.Now() + absl::Seconds(1)));
  }
  setter.join();
}

TEST(SimulatedClock, AwaitGivesUpWhenAdvancedPastTheDeadline) {
  SimulatedClock clock;
  absl::Mutex mu;
  bool never = false;
  std::thread time([&] {
    absl::SleepFor(absl::Milliseconds(5));
    clock.Advance(absl::Hours(1));
  });
  {
    absl::MutexLock lock(&mu);
    EXPECT_FALSE(clock.AwaitWithDeadline(mu, absl::Condition(&never),
                                         clock.Now() + absl::Minutes(1)));
  }
  time.join();
}

TEST(RealClock, AwaitGivesUpAtTheDeadline) {
  Clock& clock = Clock::Real();
  absl::Mutex mu;
  bool never = false;
  absl::MutexLock lock(&mu);
  const absl::Time deadline = clock.Now() + absl::Milliseconds(5);
  EXPECT_FALSE(clock.AwaitWithDeadline(mu, absl::Condition(&never), deadline));
  EXPECT_GE(clock.Now(), deadline);
}

TEST(RealClock, SleepForLetsTimePass) {
  Clock& clock = Clock::Real();
  const absl::Time start = clock.Now();
  clock.SleepFor(absl::Milliseconds(2));
  EXPECT_GE(clock.Now() - start, absl::Milliseconds(2));
}

}  // namespace
}  // namespace fedberry::clock_test
