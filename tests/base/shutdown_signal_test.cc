// SIGINT/SIGTERM stop a process through ShutdownSignal's callback; SIGHUP
// runs the hang-up callback when one is given (the server re-reads its
// revocation list) and otherwise stops it too.
#include "base/shutdown_signal.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace fedberry::shutdown_signal_test {
namespace {

TEST(ShutdownSignal, HangUpRunsItsCallbackAndDoesNotStop) {
  std::atomic<int> hangups{0};
  absl::Notification stopped;
  ShutdownSignal signal([&](int) { stopped.Notify(); },
                        [&] { hangups.fetch_add(1); });
  for (int i = 1; i <= 2; ++i) {
    ASSERT_EQ(::kill(::getpid(), SIGHUP), 0);
    for (int wait = 0; wait < 500 && hangups.load() < i; ++wait) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_EQ(hangups.load(), i);
  }
  EXPECT_FALSE(signal.received());
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(signal.received());
  EXPECT_EQ(hangups.load(), 2);
}

TEST(ShutdownSignal, WithoutAHangUpCallbackSighupStops) {
  std::atomic<int> got{0};
  absl::Notification stopped;
  ShutdownSignal signal([&](int sig) {
    got = sig;
    stopped.Notify();
  });
  ASSERT_EQ(::kill(::getpid(), SIGHUP), 0);
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(got.load(), SIGHUP);
  EXPECT_TRUE(signal.received());
}

}  // namespace
}  // namespace fedberry::shutdown_signal_test
