// RoundOpening and RoundClosing on their own, without a coordinator: a
// round opens once enough boards are there; a closed round commits,
// is kept, made durable and reported; a given-up one starts over; the last
// one ends the job. The job's state is a JobState the test owns.
#include "server/round/round_closing.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "base/testing/simulated_clock.h"
#include "server/round/round_opening.h"
#include "server/round/sync_rounds.h"
#include "tests/server/tiny_model.h"

namespace fedberry::server::round_closing_test {
namespace {

using runtime::NamedTensors;

class RoundClosingTest : public ::testing::Test {
 protected:
  // A job of `rounds` rounds whose round 1 is open and collecting.
  void Start(int rounds) {
    Make(rounds);
    absl::MutexLock lock(&job_.mu);
    auto sum = strategy_->BeginRound(job_.global);
    ASSERT_TRUE(sum.ok());
    job_.aggregate = *std::move(sum);
    job_.pending.round = job_.round;
    job_.phase = RoundPhase::kClosing;
  }
  // The parts of a job of `rounds` rounds, waiting for boards.
  void Make(int rounds) {
    source_ = std::make_unique<OwnRounds>(rounds, v1::TrainConfig{}, 1);
    absl::MutexLock lock(&job_.mu);
    job_.global = TinyModel(1);
    kind_ = std::make_unique<SyncRounds>(
        RoundContext{clock_, job_.clients, polls_, relay_, job_.phase,
                     job_.round, job_.total_rounds, job_.train, job_.global,
                     job_.pending, nullptr},
        SyncRoundOptions{close_, options_.liveness,
                         options_.min_clients_per_round},
        std::make_shared<const SharedCohorts>(1.0, 0, 1.0,
                                              options_.min_clients_per_round));
    auto strategy = MakeStrategy(StrategyOptions{}, *job_.global);
    ASSERT_TRUE(strategy.ok());
    strategy_ = *std::move(strategy);
    closing_ = std::make_unique<RoundClosing>(
        ClosingParts{options_, close_, evaluator_, clock_, job_, *source_,
                     *kind_, *strategy_, nullptr, nullptr, polls_, relay_},
        [this](const RoundReport& r) { reports_.push_back(r); });
    closing_->SetSnapshotSink(
        [this](const FederationSnapshot& s) { snapshots_.push_back(s); });
    opening_ = std::make_unique<RoundOpening>(
        OpeningParts{options_, clock_, job_, *source_, *kind_, *strategy_,
                     nullptr, declared_bound_, *closing_});
  }
  // A board that asked for a task now.
  void Board(const std::string& name) {
    absl::MutexLock lock(&job_.mu);
    ClientRecord c;
    c.name = name;
    c.num_samples = 10;
    c.polled = true;
    c.joined = c.last_seen = clock_.Now();
    job_.clients.Add(c);
  }
  void AddUpdate(float w) {
    absl::MutexLock lock(&job_.mu);
    ASSERT_TRUE(job_.aggregate->Add(*TinyModel(w), 10).ok());
  }
  float GlobalW() {
    absl::MutexLock lock(&job_.mu);
    return job_.global->at(0).tensor[0].item<float>();
  }

  CoordinatorOptions options_;
  CloseOptions close_;
  Evaluator evaluator_;
  SimulatedClock clock_;
  JobState job_{100};
  LongPolls polls_;
  SampleRelay relay_;
  std::unique_ptr<RoundSource> source_;
  std::unique_ptr<RoundKind> kind_;
  std::unique_ptr<Strategy> strategy_;
  std::unique_ptr<RoundClosing> closing_;
  DeclaredSizeBound declared_bound_{0};
  std::unique_ptr<RoundOpening> opening_;
  std::vector<RoundReport> reports_;
  std::vector<FederationSnapshot> snapshots_;
};

TEST_F(RoundClosingTest, AClosedRoundCommitsIsKeptPersistedThenReported) {
  Start(/*rounds=*/3);
  AddUpdate(3);
  closing_->Close(nullptr);
  EXPECT_FLOAT_EQ(GlobalW(), 3);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.round, 2u);
  EXPECT_EQ(job_.phase, RoundPhase::kWaiting);
  ASSERT_EQ(job_.history.reports().size(), 1u);
  EXPECT_EQ(job_.history.reports()[0].round, 1u);
  ASSERT_EQ(snapshots_.size(), 1u);
  EXPECT_EQ(snapshots_[0].next_round, 2u);
  EXPECT_EQ(snapshots_[0].global, job_.global);
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].round, 1u);
  // The next snapshot is newer than the one persisted.
  EXPECT_GT(closing_->Snapshot().sequence, snapshots_[0].sequence);
}

TEST_F(RoundClosingTest, AGivenUpRoundStartsOverWithTheSameModel) {
  Start(/*rounds=*/3);
  AddUpdate(5);
  closing_->Close("too few updates");
  EXPECT_FLOAT_EQ(GlobalW(), 1);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.round, 1u);
  EXPECT_EQ(job_.attempt, 1);
  EXPECT_EQ(job_.phase, RoundPhase::kWaiting);
  EXPECT_TRUE(job_.history.reports().empty());
  EXPECT_TRUE(reports_.empty());
  EXPECT_TRUE(snapshots_.empty());  // no budget was charged
}

TEST_F(RoundClosingTest, TheLastRoundEndsTheJobOnceItIsPublished) {
  Start(/*rounds=*/1);
  AddUpdate(2);
  closing_->Close(nullptr);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.phase, RoundPhase::kDone);
  ASSERT_EQ(reports_.size(), 1u);
  ASSERT_EQ(snapshots_.size(), 1u);
  EXPECT_EQ(snapshots_[0].next_round, 2u);
}

TEST_F(RoundClosingTest, ARoundOpensOnceEnoughBoardsAreThere) {
  options_.min_clients_to_start = 2;
  Make(/*rounds=*/3);
  Board("a");
  {
    absl::MutexLock lock(&job_.mu);
    EXPECT_FALSE(opening_->TryOpen());
    EXPECT_EQ(job_.phase, RoundPhase::kWaiting);
    EXPECT_EQ(job_.aggregate, nullptr);
  }
  Board("b");
  absl::MutexLock lock(&job_.mu);
  ASSERT_TRUE(opening_->TryOpen());
  EXPECT_EQ(job_.phase, RoundPhase::kCollecting);
  ASSERT_NE(job_.aggregate, nullptr);
  EXPECT_EQ(job_.pending.round, 1u);
  EXPECT_EQ(kind_->Members().size(), 2u);  // both drawn (fraction 1)
}

TEST_F(RoundClosingTest, AnOpenedRoundClosesIntoTheNext) {
  options_.min_clients_to_start = 1;
  options_.min_clients_per_round = 1;
  Make(/*rounds=*/3);
  Board("a");
  {
    absl::MutexLock lock(&job_.mu);
    ASSERT_TRUE(opening_->TryOpen());
    ASSERT_TRUE(job_.aggregate->Add(*TinyModel(4), 10).ok());
    job_.phase = RoundPhase::kClosing;
  }
  closing_->Close(nullptr);
  EXPECT_FLOAT_EQ(GlobalW(), 4);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.round, 2u);
  EXPECT_EQ(reports_.size(), 1u);
}

}  // namespace
}  // namespace fedberry::server::round_closing_test
