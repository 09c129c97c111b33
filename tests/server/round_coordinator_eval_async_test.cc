// RoundCoordinator: Rounds evaluated on the boards, and asynchronous rounds.
#include "tests/server/testing/round_coordinator_fixture.h"

namespace fedberry::server::round_coordinator_test {
namespace {

class BoardEvaluationRounds : public RoundCoordinatorTest {
 protected:
  void SetUp() override {
    board_eval_.holdout_fraction = 0.2;
    board_eval_.deadline = absl::Seconds(30);
    overlap_evaluation_ = true;  // not for rounds the boards evaluate
  }

  // The board's answer to its EVALUATE task `t`: `accuracy` on 2 samples.
  absl::Status Answer(const std::string& id, const v1::GetTaskResponse& t,
                      double accuracy) {
    v1::EvaluationReport r;
    r.set_client_id(id);
    r.set_round(t.round());
    r.set_task_id(t.task_id());
    r.mutable_global()->set_samples(2);
    r.mutable_global()->set_loss(1 - accuracy);
    r.mutable_global()->set_accuracy(accuracy);
    return coordinator_->ReportEvaluation(r);
  }

  // Boards a and b run round 1 to its close (models 1 and 3).
  void CloseRoundOne(std::string& a, std::string& b) {
    a = Join("a");
    b = Join("b");
    ASSERT_TRUE(coordinator_->RunOnce());
    auto ta = Task(a), tb = Task(b);
    ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
    ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
    ASSERT_TRUE(coordinator_->RunOnce());
  }
};

TEST_F(BoardEvaluationRounds, TheReportWaitsForTheBoardsFigures) {
  Make(2, /*rounds=*/3);
  std::string a, b;
  CloseRoundOne(a, b);
  EXPECT_TRUE(reports_.empty()) << "reported before the boards evaluated";
  const v1::GetTaskResponse ea = Task(a), eb = Task(b);
  ASSERT_EQ(ea.action(), v1::GetTaskResponse::EVALUATE);
  EXPECT_EQ(ea.round(), 1u);
  EXPECT_EQ(ea.task_id(), eb.task_id());
  // The model to evaluate is the round's published one.
  v1::PullModelRequest pull;
  pull.set_client_id(a);
  pull.set_round(ea.round());
  pull.set_task_id(ea.task_id());
  auto model = coordinator_->ModelFor(pull);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(SameModel(**model, Model(2, 2)));

  ASSERT_TRUE(Answer(a, ea, 0.9).ok());
  EXPECT_FALSE(coordinator_->RunOnce()) << "closed with b still evaluating";
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  ASSERT_TRUE(Answer(b, eb, 0.5).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  ASSERT_TRUE(reports_[0].board_eval.has_value());
  EXPECT_EQ(reports_[0].board_eval->boards, 2);
  EXPECT_DOUBLE_EQ(reports_[0].board_eval->combined.accuracy, 0.7);
  EXPECT_FALSE(reports_[0].eval_overlapped);
  ASSERT_TRUE(coordinator_->history()[0].board_eval.has_value());
  EXPECT_TRUE(coordinator_->history()[0].board_eval->per_board.empty());
  // Round 2 opens after: the boards train again.
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(a).round(), 2u);
}

// A board that joins again while it is asked to evaluate (a restart, a
// lost connection) is asked under its new id, and the evaluation ends when
// every board answered: it waited out the whole deadline before.
TEST_F(BoardEvaluationRounds, ABoardThatJoinsAgainIsAskedUnderItsNewId) {
  Make(2, /*rounds=*/2);
  std::string a, b;
  CloseRoundOne(a, b);
  ASSERT_EQ(Task(a).action(), v1::GetTaskResponse::EVALUATE);
  const std::string again = Join("a");
  ASSERT_NE(again, a);
  const v1::GetTaskResponse ea = Task(again);
  ASSERT_EQ(ea.action(), v1::GetTaskResponse::EVALUATE);
  ASSERT_TRUE(Answer(again, ea, 0.9).ok());
  ASSERT_TRUE(Answer(b, Task(b), 0.5).ok());
  ASSERT_TRUE(coordinator_->RunOnce()) << "waits for the retired id";
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].board_eval->asked, 2);
  EXPECT_EQ(reports_[0].board_eval->boards, 2);
}

// A board's held-out samples are bounded by its declaration as training
// caps it (--max_samples_ratio against the fleet's median), not by what it
// claimed at join: a board that declared 2^40 samples before the fleet had
// a median answered accuracy 1 over 2^38 samples and made the job's figure
// 0.99999999989.
TEST_F(BoardEvaluationRounds, AnAnswerCannotClaimMoreThanTheCappedDeclaration) {
  Make(4, /*rounds=*/2);
  v1::JoinRequest lie;
  lie.set_client_name("liar");
  lie.set_num_samples(uint64_t{1} << 40);
  auto joined = coordinator_->Join(lie);
  ASSERT_TRUE(joined.ok()) << joined.status();  // no median yet
  const std::string liar = joined->client_id();
  ASSERT_TRUE(coordinator_->GetTask(liar, absl::ZeroDuration()).ok());
  const std::vector<std::string> honest = {Join("a"), Join("b"), Join("c")};
  ASSERT_TRUE(coordinator_->RunOnce());
  for (const std::string& id : {liar, honest[0], honest[1], honest[2]}) {
    ASSERT_TRUE(Submit(Header(id, Task(id), 5), Model(1, 1)).ok());
  }
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse e = Task(liar);
  ASSERT_EQ(e.action(), v1::GetTaskResponse::EVALUATE);
  v1::EvaluationReport r;
  r.set_client_id(liar);
  r.set_round(e.round());
  r.set_task_id(e.task_id());
  r.mutable_global()->set_samples(uint64_t{1} << 38);
  r.mutable_global()->set_loss(0);
  r.mutable_global()->set_accuracy(1);
  const absl::Status refused = coordinator_->ReportEvaluation(r);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "--max_samples_ratio"))
      << refused;
  // 10 x the median's 10 samples: at most 27 held out at 0.2.
  r.mutable_global()->set_samples(27);
  EXPECT_TRUE(coordinator_->ReportEvaluation(r).ok());
  for (const std::string& id : honest)
    ASSERT_TRUE(Answer(id, Task(id), 0.5).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_LT(reports_[0].board_eval->combined.accuracy, 0.95);
}

TEST_F(BoardEvaluationRounds, SilentBoardsAreNotAwaitedPastTheDeadline) {
  Make(2, /*rounds=*/2);
  std::string a, b;
  CloseRoundOne(a, b);
  ASSERT_TRUE(Answer(a, Task(a), 0.8).ok());
  EXPECT_FALSE(coordinator_->RunOnce());
  clock_.Advance(absl::Seconds(31));
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].board_eval->asked, 2);
  EXPECT_EQ(reports_[0].board_eval->boards, 1);
  // b's late answer reaches no open evaluation.
  v1::GetTaskResponse stale;
  stale.set_round(1);
  stale.set_task_id("e1-whatever");
  EXPECT_EQ(Answer(b, stale, 0.1).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(BoardEvaluationRounds, TheLastRoundIsEvaluatedBeforeTheJobEnds) {
  board_eval_.every = 5;  // only the last of 2 rounds
  Make(2, /*rounds=*/1);
  std::string a, b;
  CloseRoundOne(a, b);
  EXPECT_FALSE(coordinator_->done());
  const v1::GetTaskResponse ea = Task(a);
  ASSERT_EQ(ea.action(), v1::GetTaskResponse::EVALUATE);
  // A board that joins now was not asked: it waits, and cannot answer.
  const std::string c = Join("c");
  EXPECT_EQ(Task(c).action(), v1::GetTaskResponse::WAIT);
  absl::Status stranger = Answer(c, ea, 1.0);
  EXPECT_EQ(stranger.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(stranger.message(), "was not asked"))
      << stranger;
  ASSERT_TRUE(Answer(a, ea, 0.6).ok());
  ASSERT_TRUE(Answer(b, Task(b), 0.6).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(coordinator_->done());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].board_eval->boards, 2);
}

TEST_F(BoardEvaluationRounds, RoundsBetweenEvaluationsReportAtOnce) {
  board_eval_.every = 2;
  Make(2, /*rounds=*/3);
  std::string a, b;
  CloseRoundOne(a, b);
  coordinator_->FinishPendingEvaluation();  // overlapped: not on the boards
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_FALSE(reports_[0].board_eval.has_value());
  EXPECT_TRUE(reports_[0].eval_overlapped);
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  v1::GetTaskResponse none;
  none.set_round(1);
  EXPECT_EQ(Answer(a, none, 0.5).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(BoardEvaluationRounds, AStoppedJobStillReportsTheHeldRound) {
  Make(2, /*rounds=*/3);
  std::string a, b;
  CloseRoundOne(a, b);
  ASSERT_TRUE(Answer(a, Task(a), 0.75).ok());
  coordinator_->Shutdown();
  coordinator_->FinishPendingEvaluation();
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].board_eval->boards, 1);
  EXPECT_TRUE(coordinator_->done());
}

// Asynchronous rounds (--mode=async): a buffer of `buffer` updates makes
// each version; `staleness` weighs as `weighting` says.
class AsyncRoundsTest : public RoundCoordinatorTest {
 public:
  friend NamedTensors AsyncVersionWithRestart(
      AsyncRoundsTest& t, bool restart, std::vector<RoundReport>& reports);

 protected:
  void MakeAsync(int buffer, int max_staleness = 4, int concurrency = 0,
                 int rounds = 3) {
    AsyncOptions a;
    a.buffer = buffer;
    a.max_staleness = max_staleness;
    a.max_concurrency = concurrency;
    async_ = a;
    Make(/*clients_per_round=*/1, rounds);
  }
};

TEST_F(AsyncRoundsTest, APushBeyondTheUpdateBoundOfItsVersionIsRefused) {
  max_update_ratio_ = 10;
  MakeAsync(/*buffer=*/1);
  const std::string a = Join("a");
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse ta = Task(a);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  const absl::Status poisoned = Submit(Header(a, ta, 5), Model(1e38f, 1e38f));
  EXPECT_EQ(poisoned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(poisoned.message().find("max_update_ratio"), std::string::npos)
      << poisoned;
  // Nothing was buffered: the version is not published.
  EXPECT_FALSE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
}

TEST_F(AsyncRoundsTest, BoardsTrainAsTheyAskAndTheBufferMakesAVersion) {
  MakeAsync(/*buffer=*/2);
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());  // version 0 is out
  const v1::GetTaskResponse ta = Task(a);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta.round(), 1u);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());  // 1 of 2
  // a trains again at once, on the same version, with its own data order.
  const v1::GetTaskResponse ta2 = Task(a);
  ASSERT_EQ(ta2.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta2.round(), 1u);
  EXPECT_NE(ta2.task_id(), ta.task_id());
  EXPECT_NE(ta2.config().seed(), ta.config().seed());
  // Its finished task is done: a second push of it is refused.
  EXPECT_FALSE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  const v1::GetTaskResponse tb = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // version 1
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  ASSERT_EQ(reports_.size(), 1u);
  ASSERT_TRUE(reports_[0].version.has_value());
  EXPECT_EQ(reports_[0].version->updates, 2);
  EXPECT_EQ(reports_[0].version->staleness_max, 0);
  EXPECT_EQ(reports_[0].participants, 2);
  // a's second task carries over into round 2.
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(coordinator_->current_round(), 2u);
  EXPECT_EQ(Task(a).task_id(), ta2.task_id());
}

TEST_F(AsyncRoundsTest, AStaleUpdateIsDecodedOnItsVersionAndWeighsLess) {
  MakeAsync(/*buffer=*/2);
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse slow = Task(a);  // pulls version 0 (zeros)
  const v1::GetTaskResponse tb = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(1, 1)).ok());
  const v1::GetTaskResponse tb2 = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb2, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // version 1: 2
  ASSERT_TRUE(coordinator_->RunOnce());  // round 2 opens on it
  // The model a pulls for its task is still version 0.
  v1::PullModelRequest pull;
  pull.set_client_id(a);
  pull.set_round(slow.round());
  pull.set_task_id(slow.task_id());
  auto pulled = coordinator_->ModelFor(pull);
  ASSERT_TRUE(pulled.ok()) << pulled.status();
  EXPECT_TRUE(SameModel(**pulled, Model(0, 0)));
  auto expected = coordinator_->BeginUpdate(Header(a, slow, 5));
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(SameModel(*expected->global, Model(0, 0)));
  // a trained 0 -> 4 one version ago: 2 + 4/sqrt(2) joins the buffer.
  ASSERT_TRUE(Submit(Header(a, slow, 5), Model(4, 4)).ok());
  const v1::GetTaskResponse tb3 = Task(b);
  EXPECT_EQ(tb3.round(), 2u);
  ASSERT_TRUE(Submit(Header(b, tb3, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  const float want = static_cast<float>((2 + 4 / std::sqrt(2.0) + 3) / 2);
  EXPECT_NEAR(coordinator_->global_model()->at(0).tensor[0][0].item<float>(),
              want, 1e-5);
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_DOUBLE_EQ(reports_[1].version->staleness_mean, 0.5);
  EXPECT_EQ(reports_[1].version->staleness_max, 1);
}

TEST_F(AsyncRoundsTest, AnUpdateStalerThanTheLimitIsRefusedAndTheBoardGoesOn) {
  MakeAsync(/*buffer=*/1, /*max_staleness=*/1, 0, /*rounds=*/5);
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse slow = Task(a);
  for (int v = 0; v < 2; ++v) {
    const v1::GetTaskResponse tb = Task(b);
    ASSERT_TRUE(Submit(Header(b, tb, 5), Model(1, 1)).ok());
    ASSERT_TRUE(coordinator_->RunOnce());  // publishes
    ASSERT_TRUE(coordinator_->RunOnce());  // opens the next
  }
  ASSERT_EQ(coordinator_->current_round(), 3u);
  absl::Status stale = Submit(Header(a, slow, 5), Model(4, 4));
  EXPECT_TRUE(absl::IsFailedPrecondition(stale)) << stale;
  EXPECT_EQ(wire::ReasonOf(stale), wire::kReasonStaleUpdate);
  const v1::GetTaskResponse fresh = Task(a);
  ASSERT_EQ(fresh.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(fresh.round(), 3u);
}

TEST_F(AsyncRoundsTest, MaxConcurrencyMakesTheOthersWait) {
  MakeAsync(/*buffer=*/2, 4, /*concurrency=*/1);
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse ta = Task(a);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::WAIT);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
}

// Boards that keep asking for work and never push held every slot: an
// honest board waited without end. A slot is a lease that a poll does not
// renew; its board then sits out as long as it held it.
TEST_F(AsyncRoundsTest, BoardsThatPollAndNeverPushLoseTheirSlots) {
  MakeAsync(/*buffer=*/2, 4, /*concurrency=*/2);
  const std::string h1 = Join("hostile-1"), h2 = Join("hostile-2");
  const std::string honest = Join("honest");
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(Task(h1).action(), v1::GetTaskResponse::TRAIN);
  ASSERT_EQ(Task(h2).action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(honest).action(), v1::GetTaskResponse::WAIT);
  for (int i = 0; i < 5; ++i) {  // 150 s of polls, past liveness (2 min)
    clock_.Advance(absl::Seconds(30));
    for (const std::string& id : {h1, h2, honest}) Task(id);
    coordinator_->RunOnce();
  }
  const v1::GetTaskResponse th = Task(honest);
  ASSERT_EQ(th.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(h1).action(), v1::GetTaskResponse::WAIT);  // benched
  ASSERT_TRUE(Submit(Header(honest, th, 5), Model(1, 1)).ok());
}

// One caller (a certificate, or a host without mutual TLS) holds no more
// than its share of the slots while another caller's boards are there.
TEST_F(AsyncRoundsTest, OneCallerHoldsNoMoreThanItsShareOfTheSlots) {
  MakeAsync(/*buffer=*/4, 4, /*concurrency=*/2);
  auto join = [this](const std::string& name, const std::string& caller) {
    v1::JoinRequest r;
    r.set_client_name(name);
    r.set_num_samples(10);
    auto j = coordinator_->Join(r, caller);
    EXPECT_TRUE(j.ok()) << j.status();
    EXPECT_TRUE(
        coordinator_->GetTask(j->client_id(), absl::ZeroDuration()).ok());
    return j->client_id();
  };
  const std::string x1 = join("x-1", "host:ipv4:10.0.0.9");
  const std::string x2 = join("x-2", "host:ipv4:10.0.0.9");
  const std::string x3 = join("x-3", "host:ipv4:10.0.0.9");
  const std::string y = join("y", "host:ipv4:10.0.0.7");
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(Task(x1).action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(x2).action(), v1::GetTaskResponse::WAIT);
  EXPECT_EQ(Task(x3).action(), v1::GetTaskResponse::WAIT);
  EXPECT_EQ(Task(y).action(), v1::GetTaskResponse::TRAIN);
}

TEST_F(AsyncRoundsTest,
       ADecliningBoardFreesItsSlotAndTheJobEndsAfterItsVersions) {
  MakeAsync(/*buffer=*/1, 4, /*concurrency=*/1, /*rounds=*/2);
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(Task(a).action(), v1::GetTaskResponse::TRAIN);
  auto declined =
      coordinator_->GetTask(a, absl::ZeroDuration(), Declining("hot"));
  ASSERT_TRUE(declined.ok());
  EXPECT_EQ(declined->action(), v1::GetTaskResponse::WAIT);
  for (int v = 0; v < 2; ++v) {
    const v1::GetTaskResponse tb = Task(b);
    ASSERT_EQ(tb.action(), v1::GetTaskResponse::TRAIN) << v;
    ASSERT_TRUE(Submit(Header(b, tb, 5), Model(1, 1)).ok());
    ASSERT_TRUE(coordinator_->RunOnce());
    coordinator_->RunOnce();
  }
  EXPECT_TRUE(coordinator_->done());
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::DONE);
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[0].declined, 1);
}

// A site gateway in asynchronous mode: each parent round is a version of
// its own, made of the first K updates its boards push; a board that
// trained on an earlier parent round counts, rebased onto the new model and
// weighed by its staleness (in this site's versions).
TEST_F(AsyncRoundsTest, AGatewayBuffersItsBoardsForEachParentRound) {
  upstream_ = true;
  MakeAsync(/*buffer=*/1);
  const std::string a = Join("a"), b = Join("b");
  EXPECT_FALSE(coordinator_->RunOnce());  // nothing from the parent yet
  ASSERT_TRUE(coordinator_->OfferRound(ParentRound(Model(1, 1))).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse ta = Task(a), slow = Task(b);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  ASSERT_EQ(slow.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta.round(), 1u);  // the site's version, not the parent's 7
  EXPECT_EQ(ta.total_rounds(), 9u);
  ASSERT_TRUE(Submit(Header(a, ta, 4), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(sent_up_.size(), 1u);
  EXPECT_EQ(sent_up_[0].upstream_task_id, "parent-task");
  EXPECT_EQ(sent_up_[0].weight, 4u);
  ASSERT_TRUE(sent_up_[0].mean.ok()) << sent_up_[0].mean.status();
  EXPECT_TRUE(SameModel(*sent_up_[0].mean, Model(3, 3)));
  // Between the parent's rounds no task is handed out.
  EXPECT_FALSE(coordinator_->RunOnce());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  UpstreamRound next = ParentRound(Model(10, 10));
  next.round = 8;
  next.task_id = "parent-task-2";
  ASSERT_TRUE(coordinator_->OfferRound(std::move(next)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(Task(a).round(), 2u);
  // b trained 1 -> 5 on the site's version 1: 10 + 4/sqrt(2).
  ASSERT_TRUE(Submit(Header(b, slow, 6), Model(5, 5)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(sent_up_.size(), 2u);
  EXPECT_EQ(sent_up_[1].upstream_task_id, "parent-task-2");
  EXPECT_EQ(sent_up_[1].weight, 6u);
  ASSERT_TRUE(sent_up_[1].mean.ok()) << sent_up_[1].mean.status();
  EXPECT_NEAR(sent_up_[1].mean->at(0).tensor[0][0].item<float>(),
              10 + 4 / std::sqrt(2.0), 1e-5);
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1].round, 8u);
  EXPECT_EQ(reports_[1].version->staleness_max, 1);
}

// Three boards push 1, 2 and 6 into a buffer of three; with `restart`, the
// server is replaced by one restored from its checkpoint after the second.
NamedTensors AsyncVersionWithRestart(AsyncRoundsTest& t, bool restart,
                                     std::vector<RoundReport>& reports);

TEST_F(AsyncRoundsTest, AServerRestartedMidBufferPublishesTheSameVersion) {
  std::vector<RoundReport> straight, restarted;
  const NamedTensors uninterrupted =
      AsyncVersionWithRestart(*this, false, straight);
  const NamedTensors resumed = AsyncVersionWithRestart(*this, true, restarted);
  EXPECT_TRUE(SameModel(uninterrupted, resumed));
  EXPECT_FALSE(SameModel(uninterrupted, Model(0, 0)));
  ASSERT_EQ(restarted.size(), 1u);
  EXPECT_EQ(restarted[0].version->updates, 3);
}

TEST_F(AsyncRoundsTest, SynchronousRoundsCarryNoVersionFigures) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  CloseWithHonestUpdates(a, Task(a), b, Task(b));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_FALSE(reports_[0].version.has_value());
}

NamedTensors AsyncVersionWithRestart(AsyncRoundsTest& t, bool restart,
                                     std::vector<RoundReport>& reports) {
  t.reports_.clear();
  t.MakeAsync(/*buffer=*/3);
  std::optional<FederationSnapshot> last;
  t.coordinator_->SetSnapshotSink(
      [&](const FederationSnapshot& s) { last = s; });
  const std::string a = t.Join("a"), b = t.Join("b"), c = t.Join("c");
  EXPECT_TRUE(t.coordinator_->RunOnce());
  const v1::GetTaskResponse ta = t.Task(a), tb = t.Task(b), tc = t.Task(c);
  EXPECT_TRUE(t.Submit(t.Header(a, ta, 3), Model(1, 1)).ok());
  EXPECT_TRUE(t.Submit(t.Header(b, tb, 5), Model(2, 2)).ok());
  if (restart) {
    EXPECT_TRUE(last.has_value());
    if (!last) return {};
    auto decoded = DecodeFederationCheckpoint(AsLoaded(*last));
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (!decoded.ok()) return {};
    EXPECT_TRUE(decoded->snapshot.async.has_value());
    t.MakeAsync(/*buffer=*/3);
    EXPECT_TRUE(t.coordinator_->Restore(decoded->snapshot).ok());
    EXPECT_TRUE(t.coordinator_->RunOnce());  // reopens round 1
  }
  EXPECT_TRUE(t.Submit(t.Header(c, tc, 7), Model(6, 6)).ok());
  EXPECT_TRUE(t.coordinator_->RunOnce());
  reports = t.reports_;
  return *t.coordinator_->global_model();
}

}  // namespace
}  // namespace fedberry::server::round_coordinator_test
