#include "client/testing/fleet_emulation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "base/testing/simulated_clock.h"

namespace fedberry::client::fleet_emulation_test {
namespace {

// "Trains" for `took` on the simulated clock and reports it; fails the
// tasks it is told to.
class TimedTrainer : public LocalTrainer {
 public:
  TimedTrainer(SimulatedClock& clock, absl::Duration took)
      : clock_(clock), took_(took) {}
  uint64_t num_samples() const override { return 7; }
  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig&,
                                     const runtime::NamedTensors&,
                                     const std::atomic<bool>&) override {
    ++calls;
    if (task.task_id == "fails") return absl::InternalError("broken");
    clock_.Advance(took_);
    TrainOutcome out;
    out.num_samples = 7;
    out.metrics.set_train_seconds(absl::ToDoubleSeconds(took_));
    return out;
  }
  int calls = 0;

 private:
  SimulatedClock& clock_;
  const absl::Duration took_;
};

// Waits on the simulated clock: each sleep moves it, and is recorded.
class FleetEmulationTest : public ::testing::Test {
 protected:
  EmulatedTime Time() {
    return {&clock_, [this](absl::Duration d) {
              sleeps_.push_back(d);
              clock_.Advance(d);
              if (stop_after_ > 0 && --stop_after_ == 0) stop_ = true;
            }};
  }
  absl::Duration Slept() const {
    absl::Duration sum;
    for (absl::Duration d : sleeps_) sum += d;
    return sum;
  }
  absl::StatusOr<TrainOutcome> Train(LocalTrainer& trainer,
                                     const std::string& task_id = "t") {
    TaskRef task;
    task.task_id = task_id;
    return trainer.Train(task, {}, {}, stop_);
  }

  SimulatedClock clock_;
  std::vector<absl::Duration> sleeps_;
  std::atomic<bool> stop_{false};
  int stop_after_ = 0;  // sleeps before a stop; 0: none
};

TEST_F(FleetEmulationTest, APausingBoardStandsStillOnEveryNthTaskOnly) {
  TimedTrainer inner(clock_, absl::Seconds(2));
  PausingTrainer pausing(inner, {3, absl::Seconds(30)}, Time());
  for (int task = 1; task <= 6; ++task) {
    const absl::Time start = clock_.Now();
    auto out = Train(pausing);
    ASSERT_TRUE(out.ok()) << out.status();
    // The pause is time away, not training: the figures are the board's.
    EXPECT_EQ(out->metrics.train_seconds(), 2);
    EXPECT_EQ(out->num_samples, 7u);
    EXPECT_EQ(clock_.Now() - start, absl::Seconds(task % 3 == 0 ? 32 : 2))
        << "task " << task;
  }
  EXPECT_EQ(Slept(), absl::Seconds(60));
  EXPECT_EQ(inner.calls, 6);
  EXPECT_EQ(pausing.num_samples(), 7u);
}

TEST_F(FleetEmulationTest, AFailedRunIsNotATaskTrainedAndIsNotPaused) {
  TimedTrainer inner(clock_, absl::Seconds(1));
  PausingTrainer pausing(inner, {2, absl::Seconds(10)}, Time());
  ASSERT_TRUE(Train(pausing).ok());
  EXPECT_EQ(Train(pausing, "fails").status().code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(sleeps_.empty());
  ASSERT_TRUE(Train(pausing).ok());  // the second task trained
  EXPECT_EQ(Slept(), absl::Seconds(10));
}

TEST_F(FleetEmulationTest, AStopEndsAPauseEarly) {
  TimedTrainer inner(clock_, absl::Seconds(1));
  PausingTrainer pausing(inner, {1, absl::Seconds(600)}, Time());
  stop_after_ = 3;
  auto out = Train(pausing);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled) << out.status();
  EXPECT_EQ(sleeps_.size(), 3u);
  EXPECT_LT(Slept(), absl::Seconds(1));
}

TEST_F(FleetEmulationTest, ASlowedBoardWaitsItsExtraTimeAndReportsIt) {
  TimedTrainer inner(clock_, absl::Seconds(2));
  SlowedTrainer slowed(inner, 4, Time());
  PausingTrainer pausing(slowed, {2, absl::Seconds(5)}, Time());
  auto first = Train(pausing);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->metrics.train_seconds(), 8);
  EXPECT_EQ(Slept(), absl::Seconds(6));
  // The pause comes after the slowed training.
  ASSERT_TRUE(Train(pausing).ok());
  EXPECT_EQ(Slept(), absl::Seconds(6 + 6 + 5));
}

}  // namespace
}  // namespace fedberry::client::fleet_emulation_test
