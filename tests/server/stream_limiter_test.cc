#include "server/stream_limiter.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/testing/simulated_clock.h"

namespace fedberry::server::stream_limiter_test {
namespace {

// Options for a limiter of `max_streams` streams that may last
// `max_duration`, `max_waiting` of them waiting.
StreamLimiter::Options Limits(int max_streams, absl::Duration max_duration,
                              int max_waiting = 0) {
  StreamLimiter::Options o;
  o.max_streams = max_streams;
  o.max_duration = max_duration;
  o.max_waiting = max_waiting;
  return o;
}

TEST(StreamLimiter, RefusesStreamsBeyondItsLimitUntilOneEnds) {
  SimulatedClock clock;
  StreamLimiter limiter(Limits(2, absl::Minutes(10)), clock);
  auto a = limiter.Admit("a", "", [] {});
  auto b = limiter.Admit("b", "", [] {});
  ASSERT_TRUE(a.ok() && b.ok());
  {
    auto c = limiter.Admit("c", "", [] {});
    EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(c.status().message().find("max_streams"), std::string::npos);
  }
  EXPECT_EQ(limiter.active(), 2);
  { auto done = *std::move(a); }  // a's stream ends
  EXPECT_EQ(limiter.active(), 1);
  EXPECT_TRUE(limiter.Admit("c", "", [] {}).ok());
}

TEST(StreamLimiter, CancelsOverdueStreamsOnce) {
  SimulatedClock clock;
  StreamLimiter limiter(Limits(0, absl::Minutes(1)), clock);
  int cancelled_old = 0, cancelled_new = 0;
  auto old = limiter.Admit("old", "", [&] { ++cancelled_old; });
  clock.Advance(absl::Seconds(45));
  auto young = limiter.Admit("young", "", [&] { ++cancelled_new; });
  EXPECT_EQ(limiter.CancelOverdue(), 0);
  clock.Advance(absl::Seconds(30));  // old: 75 s, young: 30 s
  EXPECT_EQ(limiter.CancelOverdue(), 1);
  EXPECT_EQ(limiter.CancelOverdue(), 0);  // asked once; its handler ends it
  EXPECT_EQ(cancelled_old, 1);
  EXPECT_EQ(cancelled_new, 0);
  clock.Advance(absl::Minutes(1));
  EXPECT_EQ(limiter.CancelOverdue(), 1);
  EXPECT_EQ(cancelled_new, 1);
}

TEST(StreamLimiter, ZeroMeansNoLimit) {
  SimulatedClock clock;
  StreamLimiter limiter(Limits(0, absl::ZeroDuration()), clock);
  std::vector<StreamLimiter::Ticket> held;
  for (int i = 0; i < 100; ++i) {
    auto t = limiter.Admit("s", "", [] { ADD_FAILURE() << "cancelled"; });
    ASSERT_TRUE(t.ok());
    held.push_back(*std::move(t));
  }
  clock.Advance(absl::Hours(100));
  EXPECT_EQ(limiter.CancelOverdue(), 0);
}

// Streams that wait in a limiter's queue: records the order they are
// admitted in and holds their tickets.
struct Queue {
  explicit Queue(StreamLimiter& l) : limiter(l) {}
  absl::StatusOr<StreamLimiter::Admission> Admit(
      const std::string& name, const std::string& caller = "") {
    return limiter.AdmitInTurn(
        name, caller, [] {},
        [this, name](StreamLimiter::Ticket t) {
          admitted.push_back(name);
          held.push_back(std::move(t));
        });
  }
  StreamLimiter& limiter;
  std::vector<std::string> admitted;
  std::vector<StreamLimiter::Ticket> held;
};

TEST(StreamLimiter, StreamsBeyondItsLimitWaitTheirTurnInOrder) {
  SimulatedClock clock;
  StreamLimiter limiter(Limits(1, absl::Minutes(10), /*max_waiting=*/2), clock);
  Queue queue(limiter);
  auto admit = [&](const std::string& name) { return queue.Admit(name); };
  std::vector<std::string>& admitted = queue.admitted;
  std::vector<StreamLimiter::Ticket>& held = queue.held;

  auto first = admit("first");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->ticket.has_value());  // a place was free
  auto second = admit("second");
  auto third = admit("third");
  ASSERT_TRUE(second.ok() && third.ok());
  EXPECT_FALSE(second->ticket.has_value());
  EXPECT_NE(second->waiting, 0u);
  EXPECT_EQ(limiter.waiting(), 2);
  // The queue is full: the next is refused, and says why.
  auto fourth = admit("fourth");
  EXPECT_EQ(fourth.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(fourth.status().message().find("2 wait"), std::string::npos)
      << fourth.status();
  // A stream admitted the other way does not overtake the queue.
  EXPECT_EQ(limiter.Admit("sample stream", "", [] {}).status().code(),
            absl::StatusCode::kResourceExhausted);

  first->ticket.reset();  // the first ends: the second's turn
  EXPECT_EQ(admitted, std::vector<std::string>{"second"});
  EXPECT_EQ(limiter.active(), 1);
  EXPECT_EQ(limiter.waiting(), 1);
  {
    // The second ends: the third's turn (its ticket goes into `held`).
    std::vector<StreamLimiter::Ticket> ending = std::move(held);
    held.clear();
  }
  EXPECT_EQ(admitted, (std::vector<std::string>{"second", "third"}));
  EXPECT_EQ(limiter.waiting(), 0);
  EXPECT_EQ(limiter.active(), 1);
}

TEST(StreamLimiter, AWithdrawnStreamIsNeverAdmitted) {
  SimulatedClock clock;
  StreamLimiter limiter(Limits(1, absl::Minutes(10), /*max_waiting=*/4), clock);
  Queue queue(limiter);
  auto admit = [&](const std::string& name) { return *queue.Admit(name); };
  std::vector<std::string>& admitted = queue.admitted;

  auto running = admit("running");
  auto gone = admit("gone");
  auto next = admit("next");
  EXPECT_TRUE(limiter.Withdraw(gone.waiting));  // its caller went away
  EXPECT_FALSE(limiter.Withdraw(gone.waiting));
  running.ticket.reset();
  EXPECT_EQ(admitted, std::vector<std::string>{"next"});
  EXPECT_FALSE(limiter.Withdraw(next.waiting));  // admitted already
}

TEST(StreamLimiter, WithoutAQueueAStreamBeyondTheLimitIsRefused) {
  SimulatedClock clock;
  StreamLimiter limiter(Limits(1, absl::Minutes(10)), clock);  // max_waiting 0
  auto running = limiter.AdmitInTurn(
      "a", "", [] {},
      [](StreamLimiter::Ticket) { ADD_FAILURE() << "admitted"; });
  ASSERT_TRUE(running.ok() && running->ticket.has_value());
  auto refused = limiter.AdmitInTurn(
      "b", "", [] {},
      [](StreamLimiter::Ticket) { ADD_FAILURE() << "admitted"; });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(StreamLimiter, OneCallerHoldsNoMoreThanItsShareRunningOrWaiting) {
  SimulatedClock clock;
  StreamLimiter::Options o = Limits(2, absl::Minutes(10), /*max_waiting=*/8);
  o.max_per_caller = 2;
  StreamLimiter limiter(o, clock);
  Queue queue(limiter);
  auto a1 = queue.Admit("a1", "connection a");
  auto a2 = queue.Admit("a2", "connection a");  // running: the limit is full
  ASSERT_TRUE(a1.ok() && a2.ok());
  auto a3 = queue.Admit("a3", "connection a");
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(a3.status().message().find("--max_streams_per_caller"),
            std::string::npos)
      << a3.status();
  EXPECT_EQ(limiter.Admit("a4", "connection a", [] {}).status().code(),
            absl::StatusCode::kResourceExhausted);
  // Another caller still gets a place in the queue, and its turn.
  auto b1 = queue.Admit("b1", "connection b");
  ASSERT_TRUE(b1.ok());
  EXPECT_NE(b1->waiting, 0u);
  a1->ticket.reset();
  EXPECT_EQ(queue.admitted, std::vector<std::string>{"b1"});
  // a1's end gave caller a a place back.
  EXPECT_TRUE(queue.Admit("a5", "connection a").ok());
  EXPECT_EQ(limiter.cut_offs().caller_share, 1);  // a4 found the limit full
  // A waiting stream that is withdrawn gives its place back too.
  auto b2 = queue.Admit("b2", "connection b");
  ASSERT_TRUE(b2.ok() && b2->waiting != 0);
  EXPECT_EQ(queue.Admit("b3", "connection b").status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(limiter.Withdraw(b2->waiting));
  EXPECT_TRUE(queue.Admit("b3", "connection b").ok());
}

TEST(StreamLimiter, CutsOffAStreamThatMakesNoProgressAndCountsIt) {
  SimulatedClock clock;
  StreamLimiter::Options o = Limits(0, absl::Minutes(10));
  o.max_stall = absl::Seconds(30);
  StreamLimiter limiter(o, clock);
  int stalled_cancels = 0, reading_cancels = 0;
  auto stalled =
      limiter.Admit("stalled", "connection a", [&] { ++stalled_cancels; });
  auto reading =
      limiter.Admit("reading", "connection b", [&] { ++reading_cancels; });
  ASSERT_TRUE(stalled.ok() && reading.ok());
  for (int i = 0; i < 5; ++i) {  // 50 s in all; `reading` moves every 10 s
    clock.Advance(absl::Seconds(10));
    reading->Progress();
    limiter.CancelOverdue();
  }
  EXPECT_EQ(stalled_cancels, 1);
  EXPECT_EQ(reading_cancels, 0);
  EXPECT_EQ(limiter.cut_offs().stalled, 1);
  EXPECT_EQ(limiter.cut_offs().overdue, 0);
  // Progress does not outlast max_duration.
  for (int i = 0; i < 60; ++i) {
    clock.Advance(absl::Seconds(10));
    reading->Progress();
    limiter.CancelOverdue();
  }
  EXPECT_EQ(reading_cancels, 1);
  EXPECT_EQ(limiter.cut_offs().overdue, 1);
}

TEST(StreamTurn, WaitsItsTurnHoldsItsPlaceAndLeavesTheQueueWhenGone) {
  SimulatedClock clock;
  StreamLimiter::Options o = Limits(1, absl::Minutes(10), /*max_waiting=*/4);
  o.max_stall = absl::Seconds(30);
  StreamLimiter limiter(o, clock);
  int cancelled = 0;
  auto first = std::make_unique<StreamTurn>();
  ASSERT_EQ(*first->Request(
                limiter, "first", "a", [&] { ++cancelled; },
                [] { ADD_FAILURE() << "admitted later"; }),
            true);
  StreamTurn gone, second;
  int admitted = 0;
  ASSERT_EQ(*gone.Request(
                limiter, "gone", "b", [] {},
                [] { ADD_FAILURE() << "admitted after it left"; }),
            false);
  ASSERT_EQ(*second.Request(
                limiter, "second", "c", [] {}, [&] { ++admitted; }),
            false);
  EXPECT_TRUE(gone.Withdraw());
  EXPECT_FALSE(gone.Withdraw());
  EXPECT_EQ(limiter.waiting(), 1);
  // The turn holds its ticket: its progress keeps it from being cut off.
  clock.Advance(absl::Seconds(20));
  first->Progress();
  clock.Advance(absl::Seconds(20));
  EXPECT_EQ(limiter.CancelOverdue(), 0);
  first.reset();  // the first stream ends: the second's turn
  EXPECT_EQ(admitted, 1);
  EXPECT_FALSE(second.Withdraw());  // admitted: it stays
  EXPECT_EQ(limiter.active(), 1);
  EXPECT_EQ(cancelled, 0);
}

}  // namespace
}  // namespace fedberry::server::stream_limiter_test
