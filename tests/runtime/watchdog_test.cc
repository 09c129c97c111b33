// The watchdog's state machine under scripted readings and a simulated
// clock: every transition, hold times, hysteresis, the critical path, and
// the periodic report of a long pause.
#include "runtime/watchdog.h"

#include <gtest/gtest.h>

#include "base/testing/simulated_clock.h"

namespace fedberry::runtime::watchdog_test {
namespace {

using E = WatchdogEvent;
using S = WatchdogState;

constexpr uint64_t kTotal = 1000ull << 20;

// Readings of a 1000 MiB board with `available_pct`% available and PSI
// some avg10 of `some10`% (full10 `full10`%).
MemoryReadings At(double available_pct, double some10 = 0, double full10 = 0) {
  MemoryReadings r;
  r.mem_total_bytes = kTotal;
  r.mem_available_bytes = static_cast<uint64_t>(kTotal * available_pct / 100);
  Psi psi;
  psi.some.avg10 = some10;
  psi.full = PsiLine{full10, 0, 0, 0};
  r.psi = psi;
  return r;
}

class WatchdogTest : public ::testing::Test {
 protected:
  // Polls once a second for `seconds` with the same readings; returns every
  // event seen.
  std::vector<E> Run(Watchdog& w, const MemoryReadings& r, int seconds) {
    std::vector<E> events;
    for (int i = 0; i < seconds; ++i) {
      clock_.Advance(absl::Seconds(1));
      WatchdogStep s = w.Step(r);
      events.insert(events.end(), s.events.begin(), s.events.end());
      if (!s.events.empty()) {
        EXPECT_FALSE(s.reason.empty());
      }
    }
    return events;
  }
  SimulatedClock clock_;
};

TEST_F(WatchdogTest, DefaultsAreValidAndOrdered) {
  EXPECT_TRUE(ValidateWatchdogOptions({}).ok());
  WatchdogOptions bad;
  bad.resume_available = {0.10, std::nullopt};  // below the pause level
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateWatchdogOptions(bad)));
  WatchdogOptions psi;
  psi.resume_psi_some10 = 20;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateWatchdogOptions(psi)));
}

TEST_F(WatchdogTest, CalmReadingsChangeNothing) {
  Watchdog w({}, clock_);
  EXPECT_TRUE(Run(w, At(60), 600).empty());
  EXPECT_EQ(w.state(), S::kRunning);
  EXPECT_EQ(w.micro_batches(), 1);
}

TEST_F(WatchdogTest, PausesOnlyAfterTheHoldTimeThenResumesAfterItsHold) {
  WatchdogOptions o;  // pause_hold 3 s, resume_hold 10 s
  o.report_every = absl::Seconds(60);
  Watchdog w(o, clock_);
  // Soft pressure first shrinks (after 2 s), then high pressure pauses.
  EXPECT_EQ(Run(w, At(10), 3), std::vector<E>{E::kShrink});
  EXPECT_EQ(w.state(), S::kRunning);
  EXPECT_EQ(w.micro_batches(), 2);
  EXPECT_EQ(Run(w, At(10), 1), std::vector<E>{E::kPause});
  EXPECT_EQ(w.state(), S::kPaused);
  // Below the pause level but above the resume level: still paused.
  EXPECT_TRUE(Run(w, At(20), 20).empty());
  // 9 s of calm is not enough; the 11th reading (10 s after the first) is.
  EXPECT_TRUE(Run(w, At(40), 10).empty());
  EXPECT_EQ(Run(w, At(40), 1), std::vector<E>{E::kResume});
  EXPECT_EQ(w.state(), S::kRunning);
  const WatchdogCounters c = w.counters();
  EXPECT_EQ(c.pauses, 1u);
  EXPECT_EQ(c.shrinks, 1u);
  EXPECT_EQ(c.paused, absl::Seconds(31));
  // Calm held again while running: the batch is restored.
  EXPECT_EQ(Run(w, At(40), 11), std::vector<E>{E::kRestore});
  EXPECT_EQ(w.micro_batches(), 1);
}

TEST_F(WatchdogTest, ShortSpikesDoNotPause) {
  Watchdog w({}, clock_);
  for (int i = 0; i < 50; ++i) {
    Run(w, At(10), 2);  // 2 s of high pressure: below the 3 s hold
    Run(w, At(60), 1);
  }
  EXPECT_EQ(w.state(), S::kRunning);
  EXPECT_EQ(w.counters().pauses, 0u);
}

TEST_F(WatchdogTest, SignalOscillatingAroundOneThresholdDoesNotFlap) {
  WatchdogOptions o;
  o.release_after = absl::InfiniteDuration();
  Watchdog w(o, clock_);
  // 5 s blocks at 16% and 14%: pauses once, never resumes, since the
  // resume level (25%) is never reached.
  std::vector<E> events;
  for (int i = 0; i < 60; ++i) {
    auto e = Run(w, At(i % 2 ? 14 : 16), 5);
    events.insert(events.end(), e.begin(), e.end());
  }
  int pauses = 0, resumes = 0;
  for (E e : events) {
    pauses += e == E::kPause;
    resumes += e == E::kResume;
  }
  EXPECT_EQ(pauses, 1);
  EXPECT_EQ(resumes, 0);
  EXPECT_EQ(w.counters().shrinks, 1u);
  // Alternating every second: the 3 s hold is never met, so no pause.
  Watchdog fast(o, clock_);
  for (int i = 0; i < 300; ++i) Run(fast, At(i % 2 ? 14 : 16), 1);
  EXPECT_EQ(fast.counters().pauses, 0u);

  // Around the resume level (25%) while paused: resumes never, pauses
  // never again.
  Watchdog p(o, clock_);
  Run(p, At(10), 4);
  ASSERT_EQ(p.state(), S::kPaused);
  for (int i = 0; i < 300; ++i) Run(p, At(i % 2 ? 24 : 26), 1);
  EXPECT_EQ(p.state(), S::kPaused);
  EXPECT_EQ(p.counters().pauses, 1u);
  // PSI oscillating around the pause level while running and calm in
  // memory: the PSI hold breaks every other reading.
  Watchdog q(o, clock_);
  for (int i = 0; i < 300; ++i) Run(q, At(60, i % 2 ? 9.5 : 10.5), 1);
  EXPECT_EQ(q.counters().pauses, 0u);
}

TEST_F(WatchdogTest, PsiAloneCanPauseAndMustFallForResume) {
  Watchdog w({}, clock_);
  Run(w, At(60, 12), 4);
  EXPECT_EQ(w.state(), S::kPaused);
  Run(w, At(60, 3), 30);  // above resume_psi_some10 (2%)
  EXPECT_EQ(w.state(), S::kPaused);
  EXPECT_EQ(Run(w, At(60, 1), 11), std::vector<E>{E::kResume});
}

TEST_F(WatchdogTest, OwnRssAboveItsLimitPauses) {
  WatchdogOptions o;
  o.pause_rss_bytes = 300u << 20;
  Watchdog w(o, clock_);
  MemoryReadings r = At(60);
  r.rss_bytes = 400u << 20;
  Run(w, r, 4);
  EXPECT_EQ(w.state(), S::kPaused);
  r.rss_bytes = 200u << 20;
  Run(w, r, 11);
  EXPECT_EQ(w.state(), S::kRunning);
}

TEST_F(WatchdogTest, PersistentPressureReleasesAfterReleaseAfter) {
  WatchdogOptions o;
  o.release_after = absl::Seconds(60);
  o.report_every = absl::Seconds(20);
  Watchdog w(o, clock_);
  EXPECT_EQ(Run(w, At(10), 4).back(), E::kPause);
  // 59 s paused: two "still paused" reports, then the release.
  std::vector<E> e = Run(w, At(10), 59);
  EXPECT_EQ(e, (std::vector<E>{E::kStillPaused, E::kStillPaused}));
  EXPECT_EQ(Run(w, At(10), 1), std::vector<E>{E::kRelease});
  EXPECT_EQ(w.state(), S::kReleased);
  EXPECT_EQ(w.counters().releases, 1u);
  EXPECT_EQ(w.counters().paused, absl::Seconds(60));
  // Released is final.
  EXPECT_TRUE(Run(w, At(80), 100).empty());
  EXPECT_EQ(w.state(), S::kReleased);
}

TEST_F(WatchdogTest, CriticalLevelReleasesAtOnce) {
  Watchdog w({}, clock_);
  EXPECT_EQ(Run(w, At(4), 1), std::vector<E>{E::kRelease});
  Watchdog psi({}, clock_);
  EXPECT_EQ(Run(psi, At(60, 50, 45), 1), std::vector<E>{E::kRelease});
  // From a pause too.
  Watchdog paused({}, clock_);
  Run(paused, At(10), 4);
  ASSERT_EQ(paused.state(), S::kPaused);
  EXPECT_EQ(Run(paused, At(3), 1), std::vector<E>{E::kRelease});
}

TEST_F(WatchdogTest, RestoredRunsAgainWithEveryHoldStartingOver) {
  Watchdog w({}, clock_);
  w.Restored();  // not released: nothing to do
  EXPECT_EQ(w.state(), S::kRunning);
  // Shrunk under soft pressure, then released at the critical level.
  EXPECT_EQ(Run(w, At(20), 3), std::vector<E>{E::kShrink});
  EXPECT_EQ(Run(w, At(4), 1), std::vector<E>{E::kRelease});
  ASSERT_EQ(w.micro_batches(), 2);
  w.Restored();
  EXPECT_EQ(w.state(), S::kRunning);
  EXPECT_EQ(w.micro_batches(), 1);
  EXPECT_EQ(w.counters().releases, 1u);
  // Pressure from before the release does not count: a new shrink needs
  // the whole soft hold (2 s) again, and a pause the pause hold (3 s).
  EXPECT_EQ(Run(w, At(12), 3), std::vector<E>{E::kShrink});
  EXPECT_EQ(w.state(), S::kRunning);
  EXPECT_EQ(Run(w, At(12), 1), std::vector<E>{E::kPause});
}

TEST_F(WatchdogTest, CriticalHoldTimeIsRespected) {
  WatchdogOptions o;
  o.critical_hold = absl::Seconds(5);
  Watchdog w(o, clock_);
  // Shrink (2 s), pause (3 s), then the release after 5 s of critical.
  std::vector<E> e = Run(w, At(4), 6);
  EXPECT_EQ(e, (std::vector<E>{E::kShrink, E::kPause, E::kRelease}));
}

TEST_F(WatchdogTest, WithoutReleaseItStaysPausedAndKeepsSayingSo) {
  WatchdogOptions o;
  o.release_enabled = false;
  o.report_every = absl::Seconds(30);
  Watchdog w(o, clock_);
  EXPECT_EQ(Run(w, At(3), 1), std::vector<E>{E::kPause});  // critical: at once
  Run(w, At(3), 3);
  EXPECT_EQ(w.state(), S::kPaused);
  std::vector<E> e = Run(w, At(3), 600);
  EXPECT_EQ(e.size(), 20u);
  for (E x : e) EXPECT_EQ(x, E::kStillPaused);
  EXPECT_EQ(w.counters().paused, absl::Seconds(603));
}

TEST_F(WatchdogTest, MissingReadingsNeitherPauseNorBlockResume) {
  Watchdog w({}, clock_);
  MemoryReadings none;
  EXPECT_TRUE(Run(w, none, 60).empty());
  Run(w, At(10), 4);
  ASSERT_EQ(w.state(), S::kPaused);
  EXPECT_EQ(Run(w, none, 11), std::vector<E>{E::kResume});
}

TEST(ParseMemoryLevel, ReadsSharesAndSizes) {
  EXPECT_DOUBLE_EQ(*ParseMemoryLevel("15%")->fraction, 0.15);
  EXPECT_DOUBLE_EQ(*ParseMemoryLevel("0.15")->fraction, 0.15);
  EXPECT_EQ(*ParseMemoryLevel("150MiB")->bytes, 150u << 20);
  EXPECT_EQ(*ParseMemoryLevel("150M")->bytes, 150u << 20);
  EXPECT_EQ(*ParseMemoryLevel("1GiB")->bytes, 1u << 30);
  EXPECT_EQ(*ParseMemoryLevel("4096")->bytes, 4096u);
  EXPECT_FALSE(ParseMemoryLevel("off")->set());
  EXPECT_FALSE(ParseMemoryLevel("")->set());
  for (const char* bad : {"150%%", "150Q", "abc", "1.5", "101%", "-3M"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseMemoryLevel(bad).status())) << bad;
  }
}

TEST(MemoryLevel, BelowUsesTheTighterOfShareAndBytes) {
  MemoryLevel level{0.10, 200u << 20};
  EXPECT_TRUE(level.Below(At(15)));   // 150 MiB < 200 MiB
  EXPECT_TRUE(level.Below(At(5)));    // 5% < 10%
  EXPECT_FALSE(level.Below(At(30)));  // 300 MiB, 30%
  EXPECT_FALSE(MemoryLevel{}.Below(At(1)));
}

}  // namespace
}  // namespace fedberry::runtime::watchdog_test
