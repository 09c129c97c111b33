#include "server/round/held_evaluation.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace fedberry::server::held_evaluation_test {
namespace {

HeldEvaluation::Held Round(uint64_t round) {
  HeldEvaluation::Held held;
  held.report.round = round;
  held.finished = true;
  return held;
}

TEST(HeldEvaluationTest, HandsTheAskedBoardsTheTaskAndTheModelOnly) {
  BoardEvalOptions options;
  options.holdout_fraction = 0.2;
  HeldEvaluation evaluation(options, /*seed=*/3);
  auto model = std::make_shared<const runtime::NamedTensors>(
      runtime::NamedTensors{{"w", at::ones({2})}});
  EXPECT_FALSE(evaluation.open());
  const std::set<std::string> asked =
      evaluation.Open(Round(4), model, {"a", "b"}, absl::UnixEpoch());
  EXPECT_EQ(asked, (std::set<std::string>{"a", "b"}));

  v1::GetTaskResponse task;
  ASSERT_TRUE(evaluation.Task("a", v1::TrainConfig{}, task));
  EXPECT_EQ(task.action(), v1::GetTaskResponse::EVALUATE);
  EXPECT_EQ(task.round(), 4u);
  v1::GetTaskResponse none;
  EXPECT_FALSE(evaluation.Task("c", v1::TrainConfig{}, none));

  v1::PullModelRequest pull;
  pull.set_client_id("a");
  pull.set_round(4);
  pull.set_task_id(task.task_id());
  auto pulled = evaluation.ModelFor(pull);
  ASSERT_TRUE(pulled.has_value());
  ASSERT_TRUE(pulled->ok());
  EXPECT_EQ(**pulled, model);
  pull.set_client_id("c");  // not asked
  EXPECT_EQ(evaluation.ModelFor(pull)->status().code(),
            absl::StatusCode::kFailedPrecondition);
  pull.set_task_id("r4-training");  // another task: not this evaluation's
  EXPECT_FALSE(evaluation.ModelFor(pull).has_value());
}

TEST(HeldEvaluationTest, TheHeldRoundComesBackWithTheBoardsFigures) {
  BoardEvalOptions options;
  options.holdout_fraction = 0.2;
  options.deadline = absl::Minutes(2);
  HeldEvaluation evaluation(options, 3);
  evaluation.Open(Round(2), nullptr, {"a", "b"}, absl::UnixEpoch());
  v1::GetTaskResponse task;
  ASSERT_TRUE(evaluation.Task("a", v1::TrainConfig{}, task));

  ClientRecord board;
  board.name = "board-a";
  board.num_samples = 100;
  v1::EvaluationReport report;
  report.set_client_id("a");
  report.set_round(2);
  report.set_task_id(task.task_id());
  report.mutable_global()->set_samples(20);
  report.mutable_global()->set_loss(0.5);
  report.mutable_global()->set_accuracy(0.75);
  ASSERT_TRUE(evaluation.Accept(report, board, board.num_samples).ok());
  EXPECT_FALSE(evaluation.Complete());
  EXPECT_FALSE(evaluation.Over(absl::UnixEpoch() + absl::Minutes(1), false));
  EXPECT_TRUE(evaluation.Over(absl::UnixEpoch() + absl::Minutes(1), true));
  EXPECT_TRUE(evaluation.Over(absl::UnixEpoch() + absl::Minutes(2), false));

  std::optional<HeldEvaluation::Held> held =
      evaluation.Finish(absl::UnixEpoch() + absl::Minutes(2));
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->finished);
  ASSERT_TRUE(held->report.board_eval.has_value());
  EXPECT_EQ(held->report.board_eval->asked, 2);
  EXPECT_EQ(held->report.board_eval->boards, 1);
  EXPECT_DOUBLE_EQ(held->report.board_eval->combined.accuracy, 0.75);
  EXPECT_FALSE(evaluation.open());
  EXPECT_FALSE(evaluation.Finish(absl::UnixEpoch()).has_value());
  EXPECT_EQ(evaluation.Accept(report, board, board.num_samples).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fedberry::server::held_evaluation_test
