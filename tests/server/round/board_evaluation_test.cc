#include "server/round/board_evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "absl/strings/match.h"

namespace fedberry::server::board_evaluation_test {
namespace {

BoardEvalOptions Options(int personalize_steps = 0) {
  BoardEvalOptions o;
  o.holdout_fraction = 0.2;
  o.personalize_steps = personalize_steps;
  return o;
}

v1::EvaluationReport Report(uint64_t samples, double loss, double accuracy,
                            const std::string& task = "e1-task") {
  v1::EvaluationReport r;
  r.set_round(1);
  r.set_task_id(task);
  r.mutable_global()->set_samples(samples);
  r.mutable_global()->set_loss(loss);
  r.mutable_global()->set_accuracy(accuracy);
  return r;
}

BoardEvaluation Evaluation() {
  return BoardEvaluation(1, "e1-task", nullptr, {"a", "b", "c"},
                         absl::UnixEpoch());
}

TEST(BoardEvaluation, CombinesTheBoardsWeightedBySamplesWithTheirSpread) {
  BoardEvaluation e = Evaluation();
  ASSERT_TRUE(
      e.Accept("a", "board-a", 400, Report(100, 0.5, 0.9), Options()).ok());
  EXPECT_FALSE(e.Complete());
  ASSERT_TRUE(
      e.Accept("b", "board-b", 1200, Report(300, 1.0, 0.5), Options()).ok());
  v1::EvaluationReport declined;
  declined.set_round(1);
  declined.set_task_id("e1-task");
  declined.set_declined("memory pressure: training is PAUSED");
  ASSERT_TRUE(e.Accept("c", "board-c", 400, declined, Options()).ok());
  EXPECT_TRUE(e.Complete());

  const BoardEvalSummary s = e.Summarize(absl::UnixEpoch() + absl::Seconds(3),
                                         /*regression=*/false);
  EXPECT_EQ(s.asked, 3);
  EXPECT_EQ(s.boards, 2);
  EXPECT_EQ(s.declined, 1);
  EXPECT_EQ(s.combined.samples, 400);
  EXPECT_DOUBLE_EQ(s.combined.accuracy, (100 * 0.9 + 300 * 0.5) / 400);
  EXPECT_DOUBLE_EQ(s.combined.mean_loss, (100 * 0.5 + 300 * 1.0) / 400);
  EXPECT_DOUBLE_EQ(s.min, 0.5);
  EXPECT_DOUBLE_EQ(s.median, 0.7);
  EXPECT_DOUBLE_EQ(s.max, 0.9);
  EXPECT_DOUBLE_EQ(s.seconds, 3);
  ASSERT_EQ(s.per_board.size(), 2u);
  EXPECT_EQ(s.per_board[0].client_name, "board-a");
  EXPECT_FALSE(s.personalized.has_value());
}

TEST(BoardEvaluation, RegressionCombinesTheRootOfTheMeanSquare) {
  BoardEvaluation e = Evaluation();
  v1::EvaluationReport a = Report(100, 1, 0), b = Report(300, 9, 0);
  a.mutable_global()->set_rmse(1);
  a.mutable_global()->set_mae(1);
  b.mutable_global()->set_rmse(3);
  b.mutable_global()->set_mae(2);
  ASSERT_TRUE(e.Accept("a", "a", 400, a, Options()).ok());
  ASSERT_TRUE(e.Accept("b", "b", 1200, b, Options()).ok());
  const BoardEvalSummary s = e.Summarize(absl::UnixEpoch(), true);
  EXPECT_DOUBLE_EQ(s.combined.rmse, std::sqrt((100 * 1 + 300 * 9) / 400.0));
  EXPECT_DOUBLE_EQ(s.combined.mae, (100 * 1 + 300 * 2) / 400.0);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 3);
}

// Bad figures are refused with a message naming what is wrong, and the
// combined figure stays what the honest boards said.
TEST(BoardEvaluation, RefusesBadFiguresAndKeepsTheCombinedFigure) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    v1::EvaluationReport report;
    const char* says;
  };
  v1::EvaluationReport negative_rmse = Report(50, 0.5, 0.5);
  negative_rmse.mutable_global()->set_rmse(-1);
  v1::EvaluationReport huge_mae = Report(50, 0.5, 0.5);
  huge_mae.mutable_global()->set_mae(1e300);
  v1::EvaluationReport empty;
  empty.set_round(1);
  empty.set_task_id("e1-task");
  const Case cases[] = {
      {Report(50, nan, 0.5), "loss is not finite"},
      {Report(50, inf, 0.5), "loss is not finite"},
      {Report(50, 0.5, 1.5), "accuracy 1.5 is not in [0, 1]"},
      // The lie: finite, published in rounds.jsonl and /metrics.
      {Report(50, -1e300, 0.5),
       "is out of range: a loss over held-out samples is in [0, 1e+12]"},
      {Report(50, 1e300, 0.5), "is out of range"},
      {Report(50, -0.25, 0.5), "the job's loss is never negative"},
      {Report(50, 0.5, 1.0000001),
       "accuracy 1.0000001 is not in [0, 1]: it is above 1"},
      {huge_mae, "MAE 1e+300 is out of range"},
      {Report(50, 0.5, -0.1), "is not in [0, 1]"},
      {Report(50, 0.5, nan), "is not in [0, 1]"},
      {negative_rmse, "RMSE -1 is not a finite value"},
      {Report(0, 0.5, 0.5), "cover no samples"},
      // 400 training samples at 0.2 held out: about 100, at most 102.
      {Report(1000000, 0.5, 0.5), "claim 1000000 held-out samples"},
      {empty, "neither figures nor a reason"},
  };
  BoardEvaluation e = Evaluation();
  ASSERT_TRUE(e.Accept("a", "a", 400, Report(100, 0.5, 0.8), Options()).ok());
  for (const Case& c : cases) {
    absl::Status s = e.Accept("b", "board-b", 400, c.report, Options());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.says;
    EXPECT_TRUE(absl::StrContains(s.message(), c.says)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "board-b")) << s;
  }
  EXPECT_TRUE(e.Awaits("b"));  // a refused report is no answer
  const BoardEvalSummary s = e.Summarize(absl::UnixEpoch(), false);
  EXPECT_EQ(s.boards, 1);
  EXPECT_DOUBLE_EQ(s.combined.accuracy, 0.8);
}

// A model with its own loss (a TorchScript `loss` method) may report a
// negative one, within the same bound.
TEST(BoardEvaluation, AModelsOwnLossMayBeNegativeNotAbsurd) {
  BoardEvalOptions own = Options();
  own.own_loss = true;
  EXPECT_TRUE(CheckEvaluationReport(Report(50, -3.5, 0.5), 400, own).ok());
  EXPECT_TRUE(absl::StrContains(
      CheckEvaluationReport(Report(50, -1e300, 0.5), 400, own).message(),
      "out of range"));
  EXPECT_FALSE(
      CheckEvaluationReport(Report(50, -3.5, 0.5), 400, Options()).ok());
}

TEST(BoardEvaluation, OnlyAskedBoardsAnswerOnceForTheirTask) {
  BoardEvaluation e = Evaluation();
  absl::Status stranger =
      e.Accept("z", "board-z", 400, Report(100, 0.5, 0.8), Options());
  EXPECT_EQ(stranger.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(stranger.message(), "was not asked"))
      << stranger;
  v1::EvaluationReport other_round = Report(100, 0.5, 0.8);
  other_round.set_round(2);
  EXPECT_EQ(e.Accept("a", "a", 400, other_round, Options()).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      e.Accept("a", "a", 400, Report(100, 0.5, 0.8, "e1-forged"), Options())
          .code(),
      absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(e.Accept("a", "a", 400, Report(100, 0.5, 0.8), Options()).ok());
  EXPECT_EQ(e.Accept("a", "a", 400, Report(100, 0.1, 1.0), Options()).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_DOUBLE_EQ(e.Summarize(absl::UnixEpoch(), false).combined.accuracy,
                   0.8);
}

TEST(BoardEvaluation, PersonalisedFiguresOnlyWhenAskedAndOnTheSameSamples) {
  v1::EvaluationReport r = Report(100, 0.5, 0.8);
  r.mutable_personalized()->set_samples(100);
  r.mutable_personalized()->set_loss(0.3);
  r.mutable_personalized()->set_accuracy(0.9);
  EXPECT_TRUE(absl::StrContains(
      CheckEvaluationReport(r, 400, Options(0)).message(), "asks for none"));
  EXPECT_TRUE(CheckEvaluationReport(r, 400, Options(5)).ok());
  r.mutable_personalized()->set_samples(99);
  EXPECT_TRUE(absl::StrContains(
      CheckEvaluationReport(r, 400, Options(5)).message(), "the same"));

  r.mutable_personalized()->set_samples(100);
  BoardEvaluation e = Evaluation();
  ASSERT_TRUE(e.Accept("a", "a", 400, r, Options(5)).ok());
  const BoardEvalSummary s = e.Summarize(absl::UnixEpoch(), false);
  ASSERT_TRUE(s.personalized.has_value());
  EXPECT_DOUBLE_EQ(s.personalized->accuracy, 0.9);
}

TEST(BoardEvaluation, EveryNthRoundAndTheLast) {
  BoardEvalOptions o = Options();
  o.every = 3;
  EXPECT_FALSE(EvaluatesOnBoards(o, 1, false));
  EXPECT_TRUE(EvaluatesOnBoards(o, 3, false));
  EXPECT_TRUE(EvaluatesOnBoards(o, 4, /*last=*/true));
  o.holdout_fraction = 0;
  EXPECT_FALSE(EvaluatesOnBoards(o, 3, true));
}

TEST(BoardEvaluation, TheHeldOutBoundFollowsTheShare) {
  // 800 trained + 200 held out at 0.2.
  EXPECT_GE(MaxHeldOutSamples(800, 0.2), 200u);
  EXPECT_LE(MaxHeldOutSamples(800, 0.2), 203u);
  // The smallest boards hold out one sample whatever the share.
  EXPECT_GE(MaxHeldOutSamples(1, 0.01), 1u);
  EXPECT_EQ(MaxHeldOutSamples(100, 0), 0u);
}

}  // namespace
}  // namespace fedberry::server::board_evaluation_test
