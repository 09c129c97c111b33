// The round core's parts on their own, without a coordinator: a round
// opens once enough boards are there (RoundOpening); a closed round
// commits, is kept, made durable and reported, a given-up one starts over,
// the last one ends the job, and a snapshot restores (RoundClosing); boards
// join and join again (BoardJoins) and are told their tasks (BoardTasks).
// The job's state is a JobState the test owns.
#include "server/round/round_closing.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "base/testing/simulated_clock.h"
#include "server/round/board_joins.h"
#include "server/round/board_tasks.h"
#include "server/round/job_rules.h"
#include "server/round/round_opening.h"
#include "tests/server/testing/tiny_model.h"

namespace fedberry::server::round_closing_test {
namespace {

using runtime::NamedTensors;

class RoundClosingTest : public ::testing::Test {
 protected:
  // A job of `rounds` rounds whose round 1 is closing.
  void Start(int rounds) {
    Make(rounds);
    absl::MutexLock lock(&job_.mu);
    Collect(1);
    ASSERT_TRUE(job_.StartClosing().ok());
  }
  // Round `round` collects, on the job's model.
  void Collect(uint64_t round) {
    ASSERT_TRUE(
        job_.Prepare({round, job_.global(), v1::TrainConfig{}, rounds_}).ok());
    auto sum = rules_->strategy().BeginRound(job_.global());
    ASSERT_TRUE(sum.ok());
    ASSERT_TRUE(job_.Collect(*std::move(sum), 0).ok());
  }
  // The parts of a job of `rounds` rounds, waiting for boards.
  void Make(int rounds) {
    rounds_ = rounds;
    options_.rounds = rounds;
    absl::MutexLock lock(&job_.mu);
    auto rules = JobRules::Create(options_, *TinyModel(1), nullptr, job_,
                                  polls_, relay_);
    ASSERT_TRUE(rules.ok()) << rules.status();
    rules_ = *std::move(rules);
    job_.Start(TinyModel(1), v1::TrainConfig{}, rounds, false);
    closing_ = std::make_unique<RoundClosing>(
        ClosingParts{options_, evaluator_, job_, *rules_, polls_, relay_},
        [this](const RoundReport& r) { reports_.push_back(r); });
    closing_->SetSnapshotSink(
        [this](const FederationSnapshot& s) { snapshots_.push_back(s); });
    opening_ = std::make_unique<RoundOpening>(
        OpeningParts{options_, job_, *rules_, declared_bound_, *closing_});
    joins_ = std::make_unique<BoardJoins>(
        JoinParts{job_, rules_->kind(), polls_, declared_bound_, *closing_});
    tasks_ = std::make_unique<BoardTasks>(
        TaskParts{job_, rules_->kind(), *closing_, relay_});
  }
  bool Held(const std::string& id) { return rules_->kind().PartOf(id).held; }
  // Board `name` joins (and asks for a task, as boards do); its id.
  std::string Join(const std::string& name) {
    v1::JoinRequest request;
    request.set_client_name(name);
    request.set_num_samples(10);
    absl::MutexLock lock(&job_.mu);
    absl::StatusOr<std::string> id = joins_->Add(request, "");
    EXPECT_TRUE(id.ok()) << id.status();
    if (id.ok()) job_.clients().At(*id).polled = true;
    return id.value_or("");
  }
  // A board that asked for a task now.
  void Board(const std::string& name) {
    absl::MutexLock lock(&job_.mu);
    ClientRecord c;
    c.name = name;
    c.num_samples = 10;
    c.polled = true;
    c.joined = c.last_seen = clock_.Now();
    job_.clients().Add(c);
  }
  void AddUpdate(float w) {
    absl::MutexLock lock(&job_.mu);
    ASSERT_TRUE(job_.sum()->Add(*TinyModel(w), 10).ok());
  }
  float GlobalW() {
    absl::MutexLock lock(&job_.mu);
    return job_.global()->at(0).tensor[0].item<float>();
  }

  CoordinatorOptions options_;
  Evaluator evaluator_;
  SimulatedClock clock_;
  JobState job_{clock_, 100};
  LongPolls polls_;
  SampleRelay relay_;
  uint32_t rounds_ = 0;
  std::unique_ptr<JobRules> rules_;
  std::unique_ptr<RoundClosing> closing_;
  DeclaredSizeBound declared_bound_{0};
  std::unique_ptr<RoundOpening> opening_;
  std::unique_ptr<BoardJoins> joins_;
  std::unique_ptr<BoardTasks> tasks_;
  std::vector<RoundReport> reports_;
  std::vector<FederationSnapshot> snapshots_;
};

TEST_F(RoundClosingTest, AClosedRoundCommitsIsKeptPersistedThenReported) {
  Start(/*rounds=*/3);
  AddUpdate(3);
  closing_->Close(nullptr);
  EXPECT_FLOAT_EQ(GlobalW(), 3);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.round(), 2u);
  EXPECT_EQ(job_.phase(), RoundPhase::kWaiting);
  ASSERT_EQ(job_.history().reports().size(), 1u);
  EXPECT_EQ(job_.history().reports()[0].round, 1u);
  ASSERT_EQ(snapshots_.size(), 1u);
  EXPECT_EQ(snapshots_[0].next_round, 2u);
  EXPECT_EQ(snapshots_[0].global, job_.global());
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
  EXPECT_EQ(job_.round(), 1u);
  EXPECT_EQ(job_.attempt(), 1);
  EXPECT_EQ(job_.phase(), RoundPhase::kWaiting);
  EXPECT_TRUE(job_.history().reports().empty());
  EXPECT_TRUE(reports_.empty());
  EXPECT_TRUE(snapshots_.empty());  // no budget was charged
}

TEST_F(RoundClosingTest, TheLastRoundEndsTheJobOnceItIsPublished) {
  Start(/*rounds=*/1);
  AddUpdate(2);
  closing_->Close(nullptr);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.phase(), RoundPhase::kDone);
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
    EXPECT_EQ(job_.phase(), RoundPhase::kWaiting);
    EXPECT_EQ(job_.sum(), nullptr);
  }
  Board("b");
  absl::MutexLock lock(&job_.mu);
  ASSERT_TRUE(opening_->TryOpen());
  EXPECT_EQ(job_.phase(), RoundPhase::kCollecting);
  ASSERT_NE(job_.sum(), nullptr);
  EXPECT_EQ(job_.round(), 1u);
  int held = 0;
  for (const auto& [id, board] : job_.clients().all()) held += Held(id);
  EXPECT_EQ(held, 2);  // both drawn (fraction 1)
}

TEST_F(RoundClosingTest, AnOpenedRoundClosesIntoTheNext) {
  options_.min_clients_to_start = 1;
  options_.min_clients_per_round = 1;
  Make(/*rounds=*/3);
  Board("a");
  {
    absl::MutexLock lock(&job_.mu);
    ASSERT_TRUE(opening_->TryOpen());
    ASSERT_TRUE(job_.sum()->Add(*TinyModel(4), 10).ok());
    ASSERT_TRUE(job_.StartClosing().ok());
  }
  closing_->Close(nullptr);
  EXPECT_FLOAT_EQ(GlobalW(), 4);
  absl::MutexLock lock(&job_.mu);
  EXPECT_EQ(job_.round(), 2u);
  EXPECT_EQ(reports_.size(), 1u);
}

TEST_F(RoundClosingTest, ASnapshotRestoresTheJobWhereItWas) {
  Start(/*rounds=*/3);
  Board("kept");
  Board("too-old");
  AddUpdate(3);
  closing_->Close(nullptr);
  FederationSnapshot snapshot;
  {
    absl::MutexLock lock(&job_.mu);
    snapshot = closing_->Snapshot();
    // The job goes on; the snapshot takes it back.
    Collect(2);
    ASSERT_TRUE(job_.sum()->Add(*TinyModel(9), 10).ok());
    ASSERT_TRUE(job_.StartClosing().ok());
  }
  closing_->Close(nullptr);
  EXPECT_FLOAT_EQ(GlobalW(), 9);
  absl::MutexLock lock(&job_.mu);
  ASSERT_TRUE(closing_
                  ->Restore(snapshot,
                            [](const RegisteredClient& c) {
                              return c.name != "too-old";
                            })
                  .ok());
  EXPECT_EQ(job_.round(), 2u);
  EXPECT_EQ(job_.global()->at(0).tensor[0].item<float>(), 3);
  EXPECT_EQ(job_.phase(), RoundPhase::kWaiting);
  EXPECT_EQ(job_.history().reports().size(), 1u);
  EXPECT_EQ(job_.clients().size(), 1);
  EXPECT_EQ(job_.clients().IdsNamed("too-old").size(), 0u);

  // A snapshot of another model changes nothing, and says what was wrong.
  snapshot.global = std::make_shared<const NamedTensors>(
      NamedTensors{{"other", at::zeros({4})}});
  const absl::Status misfit =
      closing_->Restore(snapshot, [](const RegisteredClient&) { return true; });
  EXPECT_EQ(misfit.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(misfit.message().find("global model does not fit"),
            std::string::npos)
      << misfit;
  EXPECT_EQ(job_.global()->at(0).tensor[0].item<float>(), 3);
}

TEST_F(RoundClosingTest, ABoardThatJoinsAgainKeepsItsPlaceUnderItsNewId) {
  options_.min_clients_to_start = 1;
  options_.min_clients_per_round = 1;
  Make(/*rounds=*/3);
  const std::string first = Join("a");
  {
    absl::MutexLock lock(&job_.mu);
    ASSERT_TRUE(opening_->TryOpen());
    ASSERT_TRUE(Held(first));
  }
  const std::string second = Join("a");
  absl::MutexLock lock(&job_.mu);
  EXPECT_NE(second, first);
  EXPECT_EQ(job_.clients().Find(first), nullptr);  // retired
  EXPECT_EQ(job_.clients().IdsNamed("a"), std::vector<std::string>{second});
  EXPECT_TRUE(Held(second));  // its place in the round
  absl::StatusOr<v1::GetTaskResponse> task = tasks_->Answer(second);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(job_.clients().CurrentId(first, "a"), second);
}

TEST_F(RoundClosingTest, BoardsAreToldToTrainWaitOrStopAndTheirTasksChecked) {
  options_.min_clients_to_start = 1;
  options_.min_clients_per_round = 1;
  options_.fraction = 1.0;
  Make(/*rounds=*/3);
  const std::string trainer = Join("trainer");
  {
    absl::MutexLock lock(&job_.mu);
    EXPECT_EQ(tasks_->Answer(trainer)->action(), v1::GetTaskResponse::WAIT);
    ASSERT_TRUE(opening_->TryOpen());
  }
  const std::string late = Join("late");  // after the cohort was drawn
  absl::MutexLock lock(&job_.mu);

  absl::StatusOr<v1::GetTaskResponse> task = tasks_->Answer(trainer);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(task->round(), 1u);
  EXPECT_TRUE(tasks_->Check(trainer, 1, task->task_id()).ok());
  EXPECT_FALSE(tasks_->Check(trainer, 1, "another-task").ok());
  EXPECT_FALSE(tasks_->Check(trainer, 2, task->task_id()).ok());
  v1::PullModelRequest pull;
  pull.set_client_id(trainer);
  pull.set_round(1);
  pull.set_task_id(task->task_id());
  absl::StatusOr<std::shared_ptr<const NamedTensors>> model =
      tasks_->ModelFor(pull);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(*model, job_.global());  // the model the round starts from
  EXPECT_EQ(*tasks_->NameForTask(trainer, 1, task->task_id()), "trainer");

  EXPECT_EQ(tasks_->Answer(late)->action(), v1::GetTaskResponse::WAIT);
  EXPECT_FALSE(tasks_->Check(late, 1, task->task_id()).ok());
  EXPECT_EQ(tasks_->Answer("no-such-id").status().code(),
            absl::StatusCode::kNotFound);

  job_.Stop();
  EXPECT_EQ(tasks_->Answer(late)->action(), v1::GetTaskResponse::DONE);
  EXPECT_TRUE(job_.clients().At(late).told_done);
}

}  // namespace
}  // namespace fedberry::server::round_closing_test
