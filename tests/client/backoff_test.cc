#include "client/backoff.h"

#include <gtest/gtest.h>

namespace fedberry::client::backoff_test {
namespace {

TEST(Backoff, GrowsExponentiallyWithJitterUpToTheCap) {
  BackoffOptions o;
  o.initial = absl::Milliseconds(100);
  o.max = absl::Seconds(1);
  o.multiplier = 2;
  o.jitter = 0.2;
  Backoff b(o, 7);
  absl::Duration base = o.initial;
  for (int i = 0; i < 10; ++i) {
    absl::Duration d = b.Next();
    EXPECT_GE(d, base * 0.8) << i;
    EXPECT_LE(d, base * 1.2) << i;
    base = std::min(base * 2, o.max);
  }
  EXPECT_EQ(b.attempts(), 10);
}

TEST(Backoff, JitterSpreadsClientsApart) {
  Backoff a({}, 1), b({}, 2);
  EXPECT_NE(a.Next(), b.Next());
}

TEST(Backoff, ResetStartsOver) {
  BackoffOptions o;
  o.jitter = 0;
  Backoff b(o);
  b.Next();
  b.Next();
  EXPECT_EQ(b.Next(), o.initial * 4);
  b.Reset();
  EXPECT_EQ(b.attempts(), 0);
  EXPECT_EQ(b.Next(), o.initial);
}

}  // namespace
}  // namespace fedberry::client::backoff_test
