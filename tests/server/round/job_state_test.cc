// The job's state machine as a table: each transition of JobState from
// each phase either moves the job where the header says or is refused with
// a message naming both, changing nothing.
#include "server/round/job_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/testing/simulated_clock.h"
#include "server/strategy/strategy.h"
#include "tests/server/testing/tiny_model.h"

namespace fedberry::server::job_state_test {
namespace {

// A job brought to `phase` through its transitions.
class Job {
 public:
  explicit Job(RoundPhase phase) {
    absl::MutexLock lock(&state_.mu);
    state_.Start(TinyModel(1), v1::TrainConfig{}, 3, false);
    if (phase == RoundPhase::kWaiting) return;
    if (phase == RoundPhase::kDone) {
      state_.Stop();
      return;
    }
    Check(state_.Prepare({1, state_.global(), v1::TrainConfig{}, 3}));
    Check(state_.Collect(Sum(), 0));
    if (phase == RoundPhase::kCollecting) return;
    Check(state_.StartClosing());
    if (phase == RoundPhase::kClosing) return;
    Check(state_.HoldForBoards());
  }
  JobState& state() { return state_; }
  std::unique_ptr<RoundAggregator> Sum() {
    return strategy_->BeginRound(state_.global()).value();
  }

 private:
  static void Check(const absl::Status& s) { ASSERT_TRUE(s.ok()) << s; }
  SimulatedClock clock_;
  // Outlives its rounds' sums.
  std::unique_ptr<Strategy> strategy_ =
      MakeStrategy(StrategyOptions{}, *TinyModel(1)).value();
  JobState state_{clock_, 10};
};

struct Transition {
  const char* name;
  std::function<absl::Status(Job&)> run;
  // The phase it leads to from each phase it may start from.
  std::vector<std::pair<RoundPhase, RoundPhase>> allowed;
};

std::vector<Transition> Transitions() {
  using P = RoundPhase;
  return {
      {"Prepare",
       [](Job& j) {
         return j.state().Prepare({2, j.state().global(), {}, 3});
       },
       {{P::kWaiting, P::kWaiting}}},
      {"SkipAttempt",
       [](Job& j) { return j.state().SkipAttempt(); },
       {{P::kWaiting, P::kWaiting}}},
      {"Collect",
       [](Job& j) { return j.state().Collect(j.Sum(), 0); },
       {{P::kWaiting, P::kCollecting}}},
      {"StartClosing",
       [](Job& j) { return j.state().StartClosing(); },
       {{P::kCollecting, P::kClosing}}},
      {"TakeClosing",
       [](Job& j) { return j.state().TakeClosing().status(); },
       {{P::kClosing, P::kClosing}}},
      {"Commit",
       [](Job& j) { return j.state().Commit(TinyModel(2), RoundReport{}); },
       {{P::kClosing, P::kClosing}}},
      {"Reopen",
       [](Job& j) { return j.state().Reopen(); },
       {{P::kClosing, P::kWaiting}}},
      {"Abandon",
       [](Job& j) { return j.state().Abandon(); },
       {{P::kClosing, P::kWaiting}}},
      {"HoldForBoards",
       [](Job& j) { return j.state().HoldForBoards(); },
       {{P::kClosing, P::kEvaluating}}},
      {"HoldEvaluationOnly",
       [](Job& j) { return j.state().HoldEvaluationOnly(RoundReport{}); },
       {{P::kWaiting, P::kEvaluating}}},
      {"EndBoardEvaluation (not the last round)",
       [](Job& j) {
         return j.state().EndBoardEvaluation(RoundReport{}, false);
       },
       {{P::kEvaluating, P::kWaiting}, {P::kDone, P::kDone}}},
      {"EndBoardEvaluation (the last round)",
       [](Job& j) { return j.state().EndBoardEvaluation(RoundReport{}, true); },
       {{P::kEvaluating, P::kClosing}, {P::kDone, P::kDone}}},
      {"Finish",
       [](Job& j) { return j.state().Finish(); },
       {{P::kClosing, P::kDone}, {P::kDone, P::kDone}}},
      {"Restore",
       [](Job& j) {
         return j.state().Restore(TinyModel(5), 2, {}, /*ended=*/false);
       },
       {{P::kWaiting, P::kWaiting}, {P::kDone, P::kWaiting}}},
  };
}

TEST(JobState, EachTransitionStartsOnlyFromItsPhasesAsATable) {
  const RoundPhase phases[] = {RoundPhase::kWaiting, RoundPhase::kCollecting,
                               RoundPhase::kClosing, RoundPhase::kEvaluating,
                               RoundPhase::kDone};
  int refused = 0;
  for (const Transition& t : Transitions()) {
    for (RoundPhase from : phases) {
      SCOPED_TRACE(std::string(t.name) + " from " + PhaseName(from));
      Job job(from);
      absl::MutexLock lock(&job.state().mu);
      const uint64_t round = job.state().round();
      const int attempt = job.state().attempt();
      const absl::Status status = t.run(job);
      auto allowed =
          std::find_if(t.allowed.begin(), t.allowed.end(),
                       [from](const auto& a) { return a.first == from; });
      if (allowed != t.allowed.end()) {
        EXPECT_TRUE(status.ok()) << status;
        EXPECT_EQ(job.state().phase(), allowed->second);
        continue;
      }
      ++refused;
      EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_TRUE(absl::StrContains(status.message(), PhaseName(from)))
          << status;
      EXPECT_EQ(job.state().phase(), from);  // nothing changed
      EXPECT_EQ(job.state().round(), round);
      EXPECT_EQ(job.state().attempt(), attempt);
    }
  }
  EXPECT_GT(refused, 40);
}

TEST(JobState, ARoundCommitsOnceItsAddsAreInAndTheNextStartsAfresh) {
  Job job(RoundPhase::kClosing);
  JobState& state = job.state();
  absl::MutexLock lock(&state.mu);
  state.BeginAdd();
  EXPECT_EQ(state.TakeClosing().status().code(),
            absl::StatusCode::kFailedPrecondition);
  state.EndAdd();
  ASSERT_TRUE(state.TakeClosing().ok());
  RoundReport report;
  report.round = 1;
  ASSERT_TRUE(state.Commit(TinyModel(7), report).ok());
  EXPECT_EQ(state.round(), 2u);
  EXPECT_EQ(state.global()->at(0).tensor[0].item<float>(), 7);
  ASSERT_EQ(state.history().reports().size(), 1u);
  ASSERT_TRUE(state.Reopen().ok());
  // A given-up attempt keeps the model and counts the attempt.
  ASSERT_TRUE(state.Prepare({2, state.global(), {}, 3}).ok());
  ASSERT_TRUE(state.Collect(job.Sum(), 0).ok());
  ASSERT_TRUE(state.StartClosing().ok());
  ASSERT_TRUE(state.Abandon().ok());
  EXPECT_EQ(state.attempt(), 1);
  EXPECT_EQ(state.round(), 2u);
  // The same round on a new model starts its attempts afresh.
  ASSERT_TRUE(state.Prepare({2, TinyModel(8), {}, 3}).ok());
  EXPECT_EQ(state.attempt(), 0);
}

TEST(JobState, StopEndsTheJobUnlessARoundIsClosing) {
  Job collecting(RoundPhase::kCollecting);
  {
    absl::MutexLock lock(&collecting.state().mu);
    collecting.state().Stop();
    EXPECT_EQ(collecting.state().phase(), RoundPhase::kDone);
  }
  Job closing(RoundPhase::kClosing);
  absl::MutexLock lock(&closing.state().mu);
  closing.state().Stop();
  EXPECT_EQ(closing.state().phase(), RoundPhase::kClosing);
  EXPECT_TRUE(closing.state().stopping());
  ASSERT_TRUE(closing.state().Abandon().ok());  // a stopped job ends
  EXPECT_EQ(closing.state().phase(), RoundPhase::kDone);
}

}  // namespace
}  // namespace fedberry::server::job_state_test
