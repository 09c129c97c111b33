// The two kinds of round on their own, without a coordinator: what each
// hands out, claims, counts and closes on, with the coordinator's state as
// a RoundContext the test owns.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "base/testing/simulated_clock.h"
#include "proto/wire.h"
#include "server/round/async_rounds.h"
#include "server/round/sync_rounds.h"
#include "tests/server/tiny_model.h"

namespace fedberry::server::round_kind_test {
namespace {

using runtime::NamedTensors;

class RoundKindTest : public ::testing::Test {
 protected:
  RoundKindTest() : global_(TinyModel(1)) {}

  RoundContext Context() {
    return RoundContext{clock_, clients_, polls_,  relay_,   phase_, round_,
                        total_, train_,   global_, pending_, nullptr};
  }
  std::string Board(const std::string& name) {
    ClientRecord c;
    c.name = name;
    c.num_samples = 10;
    c.polled = true;
    c.joined = c.last_seen = clock_.Now();
    return clients_.Add(c);
  }
  // Opens round_ of `kind` for `cohort`, collecting.
  void Open(RoundKind& kind, const Cohort& cohort) {
    std::mt19937_64 rng(7);
    phase_ = RoundPhase::kCollecting;
    auto strategy = MakeStrategy(StrategyOptions{}, *global_);
    ASSERT_TRUE(strategy.ok());
    strategy_ = *std::move(strategy);  // outlives its round's sum
    auto sum = strategy_->BeginRound(global_);
    ASSERT_TRUE(sum.ok());
    sum_ = *std::move(sum);
    kind.Open(cohort, rng, static_cast<int>(clients_.size()), *sum_);
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
  ClientRegistry clients_{100};
  LongPolls polls_;
  SampleRelay relay_;
  RoundPhase phase_ = RoundPhase::kWaiting;
  uint64_t round_ = 1;
  uint32_t total_ = 3;
  v1::TrainConfig train_;
  std::shared_ptr<const NamedTensors> global_;
  RoundReport pending_;
  std::unique_ptr<Strategy> strategy_;
  std::unique_ptr<RoundAggregator> sum_;
};

TEST_F(RoundKindTest, ASyncRoundClosedOnItsFirstUpdateRefusesTheOtherAsLate) {
  SyncRounds kind(Context(), SyncRoundOptions{}, nullptr);
  const std::string a = Board("a"), b = Board("b");
  Open(kind, Cohort{{a, b}, /*needed=*/1, 2});
  ASSERT_NE(kind.BoundFor(global_), nullptr);  // made on the round's model
  const std::optional<TrainTask> task = kind.TaskFor(a, clients_.At(a));
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->round, 1u);
  EXPECT_TRUE(kind.CheckTask(b, 1, task->task_id).ok());
  EXPECT_EQ(kind.CheckTask(b, 1, "other").code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(kind.Claim(a, global_).ok());
  EXPECT_EQ(kind.CheckNotCounted(a, 1).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(kind.Held(), std::make_pair(size_t{1}, size_t{2}));
  CloseDecision decision;
  ASSERT_TRUE(kind.Closes(decision));
  EXPECT_EQ(decision.cut_off, 1);
  RoundReport report;
  report.selected = 2;
  kind.Close(report);
  EXPECT_EQ(report.participants, 1);
  EXPECT_EQ(report.dropped, 1);

  std::optional<absl::Status> late = kind.RefuseLate(Header(b, *task));
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(wire::ReasonOf(*late), wire::kReasonLateUpdate);
  EXPECT_FALSE(kind.RefuseLate(Header(b, *task)).has_value());  // once
  RoundReport next;
  kind.Close(next);
  EXPECT_EQ(next.late_updates, 1);
}

TEST_F(RoundKindTest, ASyncClaimOnAModelTheRoundLeftIsRefused) {
  SyncRounds kind(Context(), SyncRoundOptions{}, nullptr);
  const std::string a = Board("a");
  Open(kind, Cohort{{a}, 1, 1});
  const std::shared_ptr<const NamedTensors> checked = global_;
  global_ = TinyModel(2);  // the round moved on while the update was checked
  EXPECT_EQ(kind.Claim(a, checked).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(kind.PartOf(a).training);
}

TEST_F(RoundKindTest, ASelectedBoardThatDeclinesIsNoLongerAwaited) {
  SyncRounds kind(Context(), SyncRoundOptions{}, nullptr);
  const std::string a = Board("a"), b = Board("b");
  Open(kind, Cohort{{a, b}, 2, 2});
  EXPECT_TRUE(kind.Declines(a));
  EXPECT_FALSE(kind.Declines(a));  // counted once
  EXPECT_EQ(pending_.declined, 1);
  EXPECT_FALSE(kind.PartOf(a).training);
  EXPECT_FALSE(kind.TaskFor(a, clients_.At(a)).has_value());
  EXPECT_TRUE(kind.TaskFor(b, clients_.At(b)).has_value());
}

TEST_F(RoundKindTest, AnAsyncVersionTakesUpdatesAsBoardsAskAndClosesWhenFull) {
  AsyncRoundOptions options;
  options.async.buffer = 2;
  AsyncRounds kind(Context(), options);
  const std::string a = Board("a"), b = Board("b");
  std::mt19937_64 rng(7);
  EXPECT_TRUE(kind.Draw({a, b}, rng).members.empty());
  Open(kind, Cohort{});
  const std::optional<TrainTask> ta = kind.TaskFor(a, clients_.At(a));
  ASSERT_TRUE(ta.has_value());
  ASSERT_TRUE(kind.TaskFor(b, clients_.At(b)).has_value());
  EXPECT_EQ(*kind.BaseModel(a), global_);
  // None kept: the coordinator makes one on the version a push trained on.
  EXPECT_EQ(kind.BoundFor(global_), nullptr);
  EXPECT_TRUE(kind.TakesPush());

  for (const std::string& id : {a, b}) {
    absl::StatusOr<std::optional<int>> staleness = kind.Claim(id, global_);
    ASSERT_TRUE(staleness.ok()) << staleness.status();
    EXPECT_EQ(*staleness, std::optional<int>(0));
    CloseDecision decision;
    EXPECT_FALSE(kind.Closes(decision));
    kind.Accept(id, *staleness, *TinyModel(3), 10);
  }
  EXPECT_FALSE(kind.TakesPush());  // full: a push waits for the next one
  EXPECT_TRUE(kind.PersistsEachUpdate());
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
  const std::optional<TrainTask> ta = kind.TaskFor(a, clients_.At(a));
  ASSERT_TRUE(ta.has_value());
  EXPECT_FALSE(kind.TaskFor(b, clients_.At(b)).has_value());  // no slot
  EXPECT_FALSE(kind.Refused(Header(a, *ta)));  // nothing awaited it
  EXPECT_FALSE(kind.PartOf(a).training);
  EXPECT_TRUE(kind.TaskFor(b, clients_.At(b)).has_value());
}

}  // namespace
}  // namespace fedberry::server::round_kind_test
