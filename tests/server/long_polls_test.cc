#include "server/long_polls.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>

#include "absl/synchronization/notification.h"
#include "base/testing/simulated_clock.h"

namespace fedberry::server::long_polls_test {
namespace {

// Threads of this process, from /proc/self/status.
int ThreadCount() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

const absl::Duration kLong = absl::Hours(1);
const absl::Duration kWait = absl::Seconds(30);  // only a failure waits this

TEST(LongPolls, AwaitAnswerReturnsAnAnswerGivenNowOrLater) {
  EXPECT_EQ(AwaitAnswer<int>([](std::function<void(int)>) {
              return std::optional<int>(7);
            }),
            7);
  LongPolls polls;
  // Parked, then answered on the dispatcher's thread when woken.
  const int later = AwaitAnswer<int>([&](std::function<void(int)> answer) {
    polls.Park("a", absl::Now() + kLong,
               [answer](bool woken) { answer(woken ? 8 : -1); });
    polls.Wake("a");
    return std::optional<int>();
  });
  EXPECT_EQ(later, 8);
}

TEST(LongPolls, AWakeAnswersOnlyThePollsOfItsKey) {
  LongPolls polls;
  absl::Notification a_done;
  bool a_woken = false;
  std::atomic<int> b_answers{0};
  polls.Park("a", absl::Now() + kLong, [&](bool woken) {
    a_woken = woken;
    a_done.Notify();
  });
  polls.Park("b", absl::Now() + kLong, [&](bool) { ++b_answers; });
  polls.Wake("a");
  ASSERT_TRUE(a_done.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(a_woken);
  EXPECT_EQ(polls.parked(), 1u);
  EXPECT_EQ(b_answers.load(), 0);
  polls.Wake("nobody");
  EXPECT_EQ(polls.parked(), 1u);
}

TEST(LongPolls, APollIsAnsweredAtItsDeadlineNotWoken) {
  LongPolls polls;
  absl::Notification done;
  bool woken = true;
  polls.Park("a", absl::Now() + absl::Milliseconds(20), [&](bool w) {
    woken = w;
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(woken);
  EXPECT_EQ(polls.parked(), 0u);
}

TEST(LongPolls, ADeadlineIsOnTheInjectedClock) {
  SimulatedClock clock;
  LongPolls polls(clock);
  absl::Notification done;
  bool woken = true;
  polls.Park("a", clock.Now() + absl::Minutes(1), [&](bool w) {
    woken = w;
    done.Notify();
  });
  // Real time passing does not reach the deadline.
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  clock.Advance(absl::Seconds(59));
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(woken);
  EXPECT_EQ(polls.parked(), 0u);
}

// The dispatcher waits for the earliest deadline it knows: a poll parked
// later with an earlier deadline must not wait behind it.
TEST(LongPolls, AnEarlierDeadlineParkedLaterIsNotHeldBehindALaterOne) {
  LongPolls polls;
  polls.Park("late", absl::Now() + kLong, [](bool) {});
  absl::Notification done;
  polls.Park("soon", absl::Now() + absl::Milliseconds(20),
             [&](bool) { done.Notify(); });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(polls.parked(), 1u);
}

TEST(LongPolls, ACancelledPollIsNeverAnswered) {
  LongPolls polls;
  std::atomic<int> answers{0};
  const uint64_t id =
      polls.Park("a", absl::Now() + kLong, [&](bool) { ++answers; });
  EXPECT_TRUE(polls.Cancel(id));
  EXPECT_FALSE(polls.Cancel(id));
  polls.WakeAll();
  EXPECT_EQ(polls.parked(), 0u);
  absl::Notification after;  // answers run in order: this one comes later
  polls.Park("b", absl::Now(), [&](bool) { after.Notify(); });
  ASSERT_TRUE(after.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(answers.load(), 0);
}

TEST(LongPolls, AnAnsweredPollCannotBeCancelled) {
  LongPolls polls;
  absl::Notification done;
  const uint64_t id =
      polls.Park("a", absl::Now() + kLong, [&](bool) { done.Notify(); });
  polls.WakeAll();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(polls.Cancel(id));
}

// Answers run outside the lock: one may park again (a caller that polls in
// a loop) without a deadlock.
TEST(LongPolls, AnAnswerMayParkAgain) {
  LongPolls polls;
  absl::Notification parked_again, second;
  polls.Park("a", absl::Now() + kLong, [&](bool) {
    polls.Park("a", absl::Now() + kLong, [&](bool) { second.Notify(); });
    parked_again.Notify();
  });
  polls.Wake("a");
  ASSERT_TRUE(parked_again.WaitForNotificationWithTimeout(kWait));
  polls.Wake("a");
  ASSERT_TRUE(second.WaitForNotificationWithTimeout(kWait));
}

TEST(LongPolls, DestructionAnswersWhatIsStillParked) {
  std::atomic<int> answers{0}, woken{0};
  {
    LongPolls polls;
    for (int i = 0; i < 5; ++i) {
      polls.Park("k", absl::Now() + kLong, [&](bool w) {
        ++answers;
        woken += w;
      });
    }
  }
  EXPECT_EQ(answers.load(), 5);
  EXPECT_EQ(woken.load(), 0);
}

// What the gateway needs: ten thousand waiting boards cost no thread each.
TEST(LongPolls, TenThousandParkedPollsAddNoThread) {
  LongPolls polls;
  const int before = ThreadCount();
  std::atomic<int> answers{0};
  for (int i = 0; i < 10000; ++i) {
    polls.Park("board-" + std::to_string(i), absl::Now() + kLong,
               [&](bool) { ++answers; });
  }
  EXPECT_EQ(polls.parked(), 10000u);
  EXPECT_EQ(ThreadCount(), before);
  polls.Wake("board-42");
  polls.WakeAll();
  while (answers.load() < 10000) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(polls.parked(), 0u);
}

}  // namespace
}  // namespace fedberry::server::long_polls_test
