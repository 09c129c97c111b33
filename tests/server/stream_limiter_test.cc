#include "server/stream_limiter.h"

#include <gtest/gtest.h>

#include <optional>

namespace fedberry::server {
namespace {

TEST(StreamLimiter, RefusesStreamsBeyondItsLimitUntilOneEnds) {
  SimulatedClock clock;
  StreamLimiter limiter(2, absl::Minutes(10), clock);
  auto a = limiter.Admit("a", [] {});
  auto b = limiter.Admit("b", [] {});
  ASSERT_TRUE(a.ok() && b.ok());
  {
    auto c = limiter.Admit("c", [] {});
    EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(c.status().message().find("max_streams"), std::string::npos);
  }
  EXPECT_EQ(limiter.active(), 2);
  { auto done = *std::move(a); }  // a's stream ends
  EXPECT_EQ(limiter.active(), 1);
  EXPECT_TRUE(limiter.Admit("c", [] {}).ok());
}

TEST(StreamLimiter, CancelsOverdueStreamsOnce) {
  SimulatedClock clock;
  StreamLimiter limiter(0, absl::Minutes(1), clock);
  int cancelled_old = 0, cancelled_new = 0;
  auto old = limiter.Admit("old", [&] { ++cancelled_old; });
  clock.Advance(absl::Seconds(45));
  auto young = limiter.Admit("young", [&] { ++cancelled_new; });
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
  StreamLimiter limiter(0, absl::ZeroDuration(), clock);
  std::vector<StreamLimiter::Ticket> held;
  for (int i = 0; i < 100; ++i) {
    auto t = limiter.Admit("s", [] { ADD_FAILURE() << "cancelled"; });
    ASSERT_TRUE(t.ok());
    held.push_back(*std::move(t));
  }
  clock.Advance(absl::Hours(100));
  EXPECT_EQ(limiter.CancelOverdue(), 0);
}

}  // namespace
}  // namespace fedberry::server
