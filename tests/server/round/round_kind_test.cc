// The two kinds of round on their own, without a coordinator: what each
// hands out, claims, counts and closes on, with the job's state (a JobState
// the test drives through its transitions) as their RoundContext.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "base/testing/simulated_clock.h"
#include "proto/wire.h"
#include "server/round/async_rounds.h"
#include "server/round/sync_rounds.h"
#include "tests/server/testing/tiny_model.h"

namespace fedberry::server::round_kind_test {
namespace {

using runtime::NamedTensors;

class RoundKindTest : public ::testing::Test {
 protected:
  RoundKindTest() : global_(TinyModel(1)) {
    job_.Start(global_, v1::TrainConfig{}, /*total_rounds=*/3, false);
  }

  RoundContext Context() { return RoundContext{job_, polls_, relay_, nullptr}; }
  std::string Board(const std::string& name) {
    ClientRecord c;
    c.name = name;
    c.num_samples = 10;
    c.polled = true;
    c.joined = c.last_seen = clock_.Now();
    return job_.clients().Add(c);
  }
  // Opens round `round` on `global` of `kind` for `cohort`, collecting.
  void Open(RoundKind& kind, const Cohort& cohort, uint64_t round = 1) {
    std::mt19937_64 rng(7);
    ASSERT_TRUE(job_.Prepare({round, global_, v1::TrainConfig{}, 3}).ok());
    auto strategy = MakeStrategy(StrategyOptions{}, *global_);
    ASSERT_TRUE(strategy.ok());
    strategy_ = *std::move(strategy);  // outlives its round's sum
    auto sum = strategy_->BeginRound(global_);
    ASSERT_TRUE(sum.ok());
    ASSERT_TRUE(job_.Collect(*std::move(sum), 0).ok());
    kind.Open(cohort, rng, static_cast<int>(job_.clients().size()),
              *job_.sum());
  }
  const ClientRecord& At(const std::string& id) {
    return job_.clients().At(id);
  }
  v1::UpdateHeader Header(const std::string& id, const TrainTask& task) {
    v1::UpdateHeader h;
    h.set_client_id(id);
    h.set_round(task.round);
    h.set_task_id(task.task_id);
    h.set_num_samples(10);
    return h;
  }

  SimulatedClock clock_;
  JobState job_{clock_, 100};
  LongPolls polls_;
  SampleRelay relay_;
  std::shared_ptr<const NamedTensors> global_;
  std::unique_ptr<Strategy> strategy_;
};

TEST_F(RoundKindTest, ASyncRoundClosedOnItsFirstUpdateRefusesTheOtherAsLate) {
  SyncRounds kind(Context(), SyncRoundOptions{}, nullptr);
  const std::string a = Board("a"), b = Board("b");
  Open(kind, Cohort{{a, b}, /*needed=*/1, 2});
  ASSERT_NE(kind.BaseOf(a)->bound, nullptr);  // made on the round's model
  const std::optional<TrainTask> task = kind.TaskFor(a, At(a));
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->round, 1u);
  EXPECT_TRUE(kind.CheckTask(b, 1, task->task_id, TaskUse::kFollow).ok());
  EXPECT_EQ(kind.CheckTask(b, 1, "other", TaskUse::kFollow).code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(kind.Claim(a, global_).ok());
  EXPECT_EQ(kind.CheckTask(a, 1, task->task_id, TaskUse::kPush).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(kind.CheckTask(a, 1, task->task_id, TaskUse::kFollow).ok());
  const Settled settled = kind.Settle(a, std::nullopt, *TinyModel(1), 10);
  EXPECT_EQ(settled.held, 1u);
  EXPECT_EQ(settled.of, 2u);
  EXPECT_FALSE(settled.persist);
  CloseDecision decision;
  ASSERT_TRUE(kind.Closes(decision));
  EXPECT_EQ(decision.cut_off, 1);
  RoundReport report;
  kind.Close(report);
  EXPECT_EQ(report.selected, 2);
  EXPECT_EQ(report.participants, 1);
  EXPECT_EQ(report.dropped, 1);

  const absl::Status late =
      kind.CheckTask(b, 1, task->task_id, TaskUse::kPushBegin);
  EXPECT_EQ(wire::ReasonOf(late), wire::kReasonLateUpdate) << late;
  EXPECT_NE(
      wire::ReasonOf(kind.CheckTask(b, 1, task->task_id, TaskUse::kPushBegin)),
      wire::kReasonLateUpdate);  // once
  RoundReport next;
  kind.Close(next);
  EXPECT_EQ(next.late_updates, 1);
}

TEST_F(RoundKindTest, ASyncClaimOnAModelTheRoundLeftIsRefused) {
  SyncRounds kind(Context(), SyncRoundOptions{}, nullptr);
  const std::string a = Board("a");
  Open(kind, Cohort{{a}, 1, 1});
  const std::shared_ptr<const NamedTensors> checked = global_;
  // The round moved on while the update was checked: round 2 on another
  // model.
  ASSERT_TRUE(job_.StartClosing().ok());
  ASSERT_TRUE(job_.TakeClosing().ok());
  ASSERT_TRUE(job_.Commit(TinyModel(2), RoundReport{}).ok());
  ASSERT_TRUE(job_.Reopen().ok());
  ASSERT_TRUE(job_.Prepare({2, job_.global(), v1::TrainConfig{}, 3}).ok());
  auto sum = strategy_->BeginRound(job_.global());
  ASSERT_TRUE(sum.ok());
  ASSERT_TRUE(job_.Collect(*std::move(sum), 0).ok());
  EXPECT_EQ(kind.Claim(a, checked).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(kind.PartOf(a).training);
}

TEST_F(RoundKindTest, ASelectedBoardThatDeclinesIsNoLongerAwaited) {
  SyncRounds kind(Context(), SyncRoundOptions{}, nullptr);
  const std::string a = Board("a"), b = Board("b");
  Open(kind, Cohort{{a, b}, 2, 2});
  EXPECT_TRUE(kind.Release(a, nullptr));
  EXPECT_FALSE(kind.Release(a, nullptr));  // counted once
  EXPECT_FALSE(kind.PartOf(a).training);
  EXPECT_TRUE(kind.PartOf(a).held);  // the round still holds it
  EXPECT_FALSE(kind.TaskFor(a, At(a)).has_value());
  EXPECT_TRUE(kind.TaskFor(b, At(b)).has_value());
  RoundReport report;
  kind.Close(report);
  EXPECT_EQ(report.declined, 1);
}

TEST_F(RoundKindTest, AnAsyncVersionTakesUpdatesAsBoardsAskAndClosesWhenFull) {
  AsyncRoundOptions options;
  options.async.buffer = 2;
  AsyncRounds kind(Context(), options);
  const std::string a = Board("a"), b = Board("b");
  std::mt19937_64 rng(7);
  EXPECT_TRUE(kind.Draw({a, b}, rng).members.empty());
  Open(kind, Cohort{});
  const std::optional<TrainTask> ta = kind.TaskFor(a, At(a));
  ASSERT_TRUE(ta.has_value());
  ASSERT_TRUE(kind.TaskFor(b, At(b)).has_value());
  EXPECT_EQ(kind.BaseOf(a)->model, global_);
  // None kept: the coordinator makes one on the version a push trained on.
  EXPECT_EQ(kind.BaseOf(a)->bound, nullptr);
  EXPECT_TRUE(kind.TakesPush());

  for (const std::string& id : {a, b}) {
    absl::StatusOr<std::optional<int>> staleness = kind.Claim(id, global_);
    ASSERT_TRUE(staleness.ok()) << staleness.status();
    EXPECT_EQ(*staleness, std::optional<int>(0));
    CloseDecision decision;
    EXPECT_FALSE(kind.Closes(decision));
    EXPECT_TRUE(kind.Settle(id, *staleness, *TinyModel(3), 10).persist);
  }
  EXPECT_FALSE(kind.TakesPush());  // full: a push waits for the next one
  CloseDecision decision;
  ASSERT_TRUE(kind.Closes(decision));
  RoundReport report;
  kind.Close(report);
  ASSERT_TRUE(report.version.has_value());
  EXPECT_EQ(report.version->updates, 2);
  EXPECT_EQ(report.participants, 2);
  EXPECT_EQ(report.dropped, 0);
  ASSERT_TRUE(kind.State().has_value());
}

TEST_F(RoundKindTest, AnAsyncUpdateIsMovedOntoTheCurrentModelByItsWeight) {
  AsyncRounds kind(Context(), AsyncRoundOptions{});
  // Trained from 1 to 3 on a version now at 10, one version stale: the
  // current model moves by (3 - 1) / sqrt(2).
  const NamedTensors added =
      kind.Prepare(*TinyModel(3), *TinyModel(1), *TinyModel(10), 1);
  EXPECT_NEAR(added[0].tensor[0].item<float>(), 10 + 2 / std::sqrt(2.0), 1e-5);
}

TEST_F(RoundKindTest, AnAsyncTaskRefusedForWhatItCarriedFreesItsSlot) {
  AsyncRoundOptions options;
  options.async.max_concurrency = 1;
  AsyncRounds kind(Context(), options);
  const std::string a = Board("a"), b = Board("b");
  Open(kind, Cohort{});
  const std::optional<TrainTask> ta = kind.TaskFor(a, At(a));
  ASSERT_TRUE(ta.has_value());
  EXPECT_FALSE(kind.TaskFor(b, At(b)).has_value());  // no slot
  const v1::UpdateHeader refused = Header(a, *ta);
  EXPECT_FALSE(kind.Release(a, &refused));  // nothing awaited it
  EXPECT_FALSE(kind.PartOf(a).training);
  EXPECT_TRUE(kind.TaskFor(b, At(b)).has_value());
}

}  // namespace
}  // namespace fedberry::server::round_kind_test
