#include "server/round/board_messages.h"

#include <gtest/gtest.h>

#include "server/fleet/board_state.h"
#include "server/round/job_history.h"

namespace fedberry::server::board_messages_test {
namespace {

ClientRecord Joined() {
  v1::JoinRequest join;
  join.set_client_name("pi-1");
  join.set_num_samples(640);
  join.mutable_device()->set_cores(4);
  join.mutable_device()->set_architecture("aarch64");
  join.set_client_version(std::string("0.1.0\x01", 6));
  return RecordOfJoin(join, absl::FromUnixSeconds(100));
}

TEST(BoardMessagesTest, AJoinMakesTheRecordWithItsDeclarationsPrintable) {
  const ClientRecord record = Joined();
  EXPECT_EQ(record.name, "pi-1");
  EXPECT_EQ(record.num_samples, 640u);
  EXPECT_EQ(record.joined, absl::FromUnixSeconds(100));
  EXPECT_EQ(record.last_seen, record.joined);
  EXPECT_EQ(record.client_version.find('\x01'), std::string::npos);
  EXPECT_EQ(JoinedLine(record, "c7"),
            "client 'pi-1' joined as c7 (640 samples, 4 cores, aarch64)");
}

TEST(BoardMessagesTest, AHeartbeatKeepsItsStateAndBoundsItsProgress) {
  ClientRecord record = Joined();
  v1::HeartbeatRequest beat;
  beat.set_state(v1::HeartbeatRequest::PAUSED);
  beat.set_steps_planned(20);
  beat.set_steps_done(500);  // more than planned: cut to the plan
  NoteHeartbeat(record, beat, /*round=*/3);
  EXPECT_EQ(record.state, v1::HeartbeatRequest::PAUSED);
  EXPECT_EQ(record.steps_planned, 20u);
  EXPECT_EQ(record.steps_done, 20u);
}

TEST(BoardMessagesTest, AConditionSaysWhetherTheBoardDeclines) {
  ClientRecord record = Joined();
  v1::BoardCondition hot;
  hot.set_declined("too hot");
  EXPECT_TRUE(NoteCondition(record, hot));
  EXPECT_EQ(record.condition.declined(), "too hot");
  EXPECT_FALSE(NoteCondition(record, v1::BoardCondition{}));
  EXPECT_TRUE(record.condition.declined().empty());
}

TEST(BoardMessagesTest, ARowShowsTheBoardsPartInTheRound) {
  ClientRecord record = Joined();
  record.last_round = 2;
  record.steps_done = 5;
  record.steps_planned = 20;
  BoardRow idle = RowOf(record, BoardPart{}, /*heard_recently=*/true,
                        /*evaluating=*/false);
  EXPECT_EQ(idle.state, BoardState::kIdle);
  EXPECT_EQ(idle.round, 2u);          // the last round it delivered to
  EXPECT_EQ(idle.steps_planned, 0u);  // progress shows while training only

  BoardRow training =
      RowOf(record, BoardPart{true, false, 3, true, std::nullopt}, true, false);
  EXPECT_EQ(training.state, BoardState::kTraining);
  EXPECT_EQ(training.round, 3u);
  EXPECT_EQ(training.steps_done, 5u);
  EXPECT_EQ(training.architecture, "aarch64");

  EXPECT_EQ(RowOf(record, BoardPart{}, true, true).state,
            BoardState::kEvaluating);
  EXPECT_EQ(
      RowOf(record, BoardPart{true, false, 3, true, std::nullopt}, false, false)
          .state,
      BoardState::kGone);
}

TEST(JobHistoryTest, KeepsSummariesAndLateFiguresAndTimeAcrossRestarts) {
  JobHistory history;
  history.Start(absl::FromUnixSeconds(10));
  history.Start(absl::FromUnixSeconds(50));  // the first start stays
  EXPECT_DOUBLE_EQ(history.ElapsedSeconds(absl::FromUnixSeconds(40)), 30);

  RoundReport round;
  round.round = 1;
  round.clients.resize(3);
  history.Add(round);
  ASSERT_EQ(history.reports().size(), 1u);
  EXPECT_TRUE(history.reports()[0].clients.empty());  // in clients.jsonl

  RoundReport evaluated = round;
  evaluated.eval_seconds = 2.5;
  history.AddEvaluation(evaluated);
  EXPECT_TRUE(history.reports()[0].eval_overlapped);
  EXPECT_DOUBLE_EQ(history.reports()[0].eval_seconds, 2.5);
  evaluated.round = 9;  // no such round: nothing changes
  evaluated.eval_seconds = 7;
  history.AddEvaluation(evaluated);
  EXPECT_DOUBLE_EQ(history.reports()[0].eval_seconds, 2.5);

  RoundReport last = round;
  last.elapsed_seconds = 100;
  JobHistory restarted;
  restarted.Restore({round, last});
  restarted.Start(absl::FromUnixSeconds(0));
  EXPECT_DOUBLE_EQ(restarted.ElapsedSeconds(absl::FromUnixSeconds(5)), 105);
}

}  // namespace
}  // namespace fedberry::server::board_messages_test
