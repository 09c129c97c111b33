// RoundCoordinator: Rounds: parked polls, the planner, refused updates,
// deadlines, paused and released boards, rejoins, snapshots.
#include "secagg/board_session.h"
#include "secagg/random_source.h"
#include "secagg/unsigned_keys.h"
#include "secagg/wire_messages.h"
#include "tests/server/testing/round_coordinator_fixture.h"

namespace fedberry::server::round_coordinator_test {
namespace {

// A waiting board's poll holds no thread: it is parked, and the round that
// selects it answers it at once (not at its deadline), while a board the
// round did not select stays parked.
TEST_F(RoundCoordinatorTest, AParkedPollIsAnsweredByTheRoundThatSelectsIt) {
  Make(2, /*rounds=*/1);
  std::string a = Join("a");
  absl::Notification answered;
  absl::StatusOr<v1::GetTaskResponse> got;
  uint64_t poll = 0;
  auto now = coordinator_->PollTask(
      a, {}, absl::Now() + absl::Hours(1),
      [&](absl::StatusOr<v1::GetTaskResponse> task) {
        got = std::move(task);
        answered.Notify();
      },
      poll);
  ASSERT_FALSE(now.has_value());  // nothing to do yet: parked
  EXPECT_EQ(coordinator_->parked_polls(), 1u);
  std::string b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());  // opens the round for a and b
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->action(), v1::GetTaskResponse::TRAIN);
  EXPECT_FALSE(coordinator_->CancelTaskPoll(poll));  // already answered
  // A poll of a board that joins later is parked and taken back.
  std::string c = Join("c");
  uint64_t c_poll = 0;
  auto c_now = coordinator_->PollTask(
      c, {}, absl::Now() + absl::Hours(1),
      [](absl::StatusOr<v1::GetTaskResponse>) { FAIL() << "answered"; },
      c_poll);
  ASSERT_FALSE(c_now.has_value());
  EXPECT_TRUE(coordinator_->CancelTaskPoll(c_poll));
  EXPECT_EQ(coordinator_->parked_polls(), 0u);
}

// A board's wait for the next secure-aggregation stage is a long poll too:
// parked (no thread, no traffic) until the stage closes, then answered with
// what the stage gave it.
TEST_F(RoundCoordinatorTest, ASecAggWaitIsParkedUntilItsStageCloses) {
  secagg_ = SecAggOptions{};
  Make(2, /*rounds=*/1);
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  secagg::UnsignedKeys keys;
  auto keys_message = [&](const std::string& id, v1::SecAggRequest& base) {
    const v1::GetTaskResponse task = Task(id);
    auto settings = secagg::FromProto(task.secagg());
    EXPECT_TRUE(settings.ok()) << settings.status();
    settings->config.round = task.round();
    auto board = secagg::BoardSession::Create(settings->config, settings->board,
                                              secagg::OsRandom(), keys, keys);
    EXPECT_TRUE(board.ok()) << board.status();
    auto ad = board->AdvertiseKeys();
    EXPECT_TRUE(ad.ok()) << ad.status();
    base.set_client_id(id);
    base.set_round(task.round());
    base.set_task_id(task.task_id());
    base.set_session(task.secagg().session());
    v1::SecAggRequest request = base;
    *request.mutable_keys() = secagg::ToProto(*ad);
    return request;
  };
  v1::SecAggRequest a_base, b_base;
  const v1::SecAggRequest a_keys = keys_message(a, a_base);
  const v1::SecAggRequest b_keys = keys_message(b, b_base);
  ASSERT_TRUE(coordinator_->SecAggStep(a_keys, "").ok());
  v1::SecAggRequest wait = a_base;
  wait.set_await(1);
  absl::Notification answered;
  absl::StatusOr<v1::SecAggResponse> got;
  uint64_t poll = 0;
  auto now = coordinator_->PollSecAggStep(
      wait, "", absl::Now() + absl::Hours(1),
      [&](absl::StatusOr<v1::SecAggResponse> r) {
        got = std::move(r);
        answered.Notify();
      },
      poll);
  ASSERT_FALSE(now.has_value()) << "b's keys are not in: the wait is parked";
  EXPECT_EQ(coordinator_->parked_polls(), 1u);
  ASSERT_TRUE(coordinator_->SecAggStep(b_keys, "").ok());  // closes stage 0
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->action(), v1::SecAggResponse::PROCEED);
  ASSERT_EQ(got->neighbour_keys_size(), 1);          // b, its one neighbour
  EXPECT_FALSE(coordinator_->CancelTaskPoll(poll));  // already answered
  // Answered polls leave the park.
  EXPECT_EQ(coordinator_->parked_polls(), 0u);
}

// After the last round the server keeps answering while boards that have
// not heard DONE may still ask: those heard from lately, not those gone.
TEST_F(RoundCoordinatorTest, BoardsAwaitingDoneAreThoseStillAsking) {
  Make(2, /*rounds=*/1);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  ASSERT_TRUE(Submit(Header(a, ta, 1), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 1), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(coordinator_->done());
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 2);
  // One that joined and never asked is not waited for.
  v1::JoinRequest silent;
  silent.set_client_name("silent");
  silent.set_num_samples(10);
  ASSERT_TRUE(coordinator_->Join(silent).ok());
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 2);
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 1);
  clock_.Advance(absl::Seconds(31));  // b went quiet: it is not waited for
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 0);
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::DONE);  // still told
}

// A board whose pushes are refused as busy polls no more, but it is alive:
// the end waits for it to come back and hear DONE.
TEST_F(RoundCoordinatorTest, ABoardHeardOnlyByABusyPushIsStillAwaited) {
  Make(2, /*rounds=*/1);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  Task(b);
  ASSERT_TRUE(Submit(Header(a, ta, 1), Model(1, 1)).ok());
  clock_.Advance(absl::Seconds(61));  // b's pushes are told "busy"...
  coordinator_->Seen(b);
  coordinator_->Seen("an-id-nobody-has");  // ignored
  // The deadline closes the round with a's update (quorum 0.5).
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(coordinator_->done());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  // ...so it is still awaited, though it has not polled for 61 s.
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 1);
  clock_.Advance(absl::Seconds(31));
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 0);
}

// A server restarted from the checkpoint of a finished job answers DONE,
// but waits only for the restored boards that ask again.
TEST_F(RoundCoordinatorTest, RestoredBoardsAreAwaitedOnlyOnceTheyAsk) {
  Make(2, /*rounds=*/1);
  std::vector<FederationSnapshot> snapshots;
  coordinator_->SetSnapshotSink(
      [&](const FederationSnapshot& s) { snapshots.push_back(s); });
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(a, Task(a), 1), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 1), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(snapshots.size(), 1u);
  Make(2, /*rounds=*/1);
  ASSERT_TRUE(coordinator_->Restore(snapshots[0]).ok());
  ASSERT_TRUE(coordinator_->done());
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 0);
  // a asks (it is heard) and is told at once.
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  EXPECT_EQ(coordinator_->clients_awaiting_done(absl::Seconds(30)), 0);
}

TEST_F(RoundCoordinatorTest, PlannerGivesSlowClientsFewerStepsAndKeepsTotal) {
  for (const std::string planner : {"greedy", "ilp"}) {
    reports_.clear();
    Make(2, /*rounds=*/3, planner);
    std::string fast = Join("fast"), slow = Join("slow");
    ASSERT_TRUE(coordinator_->RunOnce());
    // Round 1: nothing measured yet, so everyone trains the job's config.
    auto tf = Task(fast), ts = Task(slow);
    EXPECT_EQ(tf.config().local_steps(), 10u);
    EXPECT_EQ(ts.config().local_steps(), 10u);
    ASSERT_TRUE(Submit(WithSpeed(Header(fast, tf, 40), 400), Model(1, 1)).ok());
    ASSERT_TRUE(Submit(WithSpeed(Header(slow, ts, 40), 100), Model(1, 1)).ok());
    ASSERT_TRUE(coordinator_->RunOnce());  // closes round 1
    ASSERT_TRUE(coordinator_->RunOnce());  // opens round 2, planned
    tf = Task(fast);
    ts = Task(slow);
    EXPECT_EQ(tf.config().local_steps() + ts.config().local_steps(), 20u);
    EXPECT_EQ(tf.config().local_steps(), 16u) << planner;  // 16/400 = 4/100
    EXPECT_EQ(ts.config().local_steps(), 4u) << planner;
    // The slow client vanishes mid-round: the deadline and quorum close the
    // round, not the planner.
    ASSERT_TRUE(Submit(WithSpeed(Header(fast, tf, 64), 400), Model(2, 2)).ok());
    EXPECT_FALSE(coordinator_->RunOnce());
    clock_.Advance(absl::Seconds(61));
    ASSERT_TRUE(coordinator_->RunOnce());
    ASSERT_EQ(reports_.size(), 2u);
    EXPECT_EQ(reports_[1].participants, 1);
    EXPECT_EQ(reports_[1].stragglers, 1);
    EXPECT_EQ(reports_[0].planner, "uniform");
    EXPECT_EQ(reports_[1].planner, planner);
    EXPECT_GT(reports_[1].planned_makespan_seconds, 0);
  }
}

// The capacity estimates go into the server's checkpoint (through its
// encoding), so a restarted server plans round 2 from them at once.
TEST_F(RoundCoordinatorTest, ARestartedServerPlansWithCheckpointedCapacities) {
  Make(2, /*rounds=*/3, "greedy");
  std::vector<FederationSnapshot> snapshots;
  coordinator_->SetSnapshotSink(
      [&](const FederationSnapshot& s) { snapshots.push_back(s); });
  std::string fast = Join("fast"), slow = Join("slow");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto tf = Task(fast), ts = Task(slow);
  ASSERT_TRUE(Submit(WithSpeed(Header(fast, tf, 40), 400), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(WithSpeed(Header(slow, ts, 40), 100), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // closes round 1
  ASSERT_EQ(snapshots.size(), 1u);
  ASSERT_EQ(snapshots[0].capacities.size(), 2u);
  EXPECT_EQ(snapshots[0].capacities.at("slow").seconds_per_sample,
            std::deque<double>{0.01});

  auto decoded = DecodeFederationCheckpoint(AsLoaded(snapshots[0]));
  ASSERT_TRUE(decoded.ok()) << decoded.status();

  for (const bool with_capacities : {true, false}) {
    SCOPED_TRACE(with_capacities ? "with capacities" : "without");
    Make(2, /*rounds=*/3, "greedy");  // the restarted server
    FederationSnapshot snapshot = decoded->snapshot;
    if (!with_capacities) snapshot.capacities.clear();  // an older checkpoint
    ASSERT_TRUE(coordinator_->Restore(snapshot).ok());
    fast = Join("fast");
    slow = Join("slow");
    ASSERT_TRUE(coordinator_->RunOnce());  // opens round 2
    tf = Task(fast);
    ts = Task(slow);
    ASSERT_EQ(tf.round(), 2u);
    EXPECT_EQ(tf.config().local_steps(), with_capacities ? 16u : 10u);
    EXPECT_EQ(ts.config().local_steps(), with_capacities ? 4u : 10u);
  }
}

TEST_F(RoundCoordinatorTest, BadUpdatesAreRefusedAndChangeNothing) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  const NamedTensors before = *coordinator_->global_model();

  auto wrong_round = Header(a, ta, 5);
  wrong_round.set_round(7);
  EXPECT_EQ(Submit(wrong_round, Model(1, 1)).code(),
            absl::StatusCode::kFailedPrecondition);

  auto wrong_task = Header(a, ta, 5);
  wrong_task.set_task_id("r1-forged");
  EXPECT_EQ(Submit(wrong_task, Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(Submit(Header("c9999-unknown", ta, 5), Model(1, 1)).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Submit(Header(a, ta, 0), Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);

  NamedTensors nan = Model(1, 1);
  nan[0].tensor[0][1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Submit(Header(a, ta, 5), nan).code(),
            absl::StatusCode::kInvalidArgument);
  NamedTensors shape = Model(1, 1);
  shape[1].tensor = at::zeros({3});
  EXPECT_EQ(Submit(Header(a, ta, 5), shape).code(),
            absl::StatusCode::kInvalidArgument);
  NamedTensors names = Model(1, 1);
  names[1].name = "bias";
  EXPECT_EQ(Submit(Header(a, ta, 5), names).code(),
            absl::StatusCode::kInvalidArgument);

  // None of it counted: the round still waits for both, and a good update
  // from a is still accepted once.
  EXPECT_FALSE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(2, 2)).ok());
  EXPECT_EQ(Submit(Header(a, ta, 5), Model(9, 9)).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), before));

  auto tb = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(4, 4)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(3, 3)));

  // A late update for the closed round is refused.
  EXPECT_EQ(Submit(Header(b, tb, 5), Model(1, 1)).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(RoundCoordinatorTest, NotSelectedClientCannotPullOrPush) {
  Make(1);
  CoordinatorOptions o;
  std::string a = Join("a");
  ASSERT_TRUE(coordinator_->RunOnce());
  std::string late = Join("late");
  auto ta = Task(a);
  EXPECT_EQ(Task(late).action(), v1::GetTaskResponse::WAIT);
  v1::PullModelRequest pull;
  pull.set_client_id(late);
  pull.set_round(ta.round());
  pull.set_task_id(ta.task_id());
  EXPECT_EQ(coordinator_->ModelFor(pull).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Submit(Header(late, ta, 5), Model(1, 1)).code(),
            absl::StatusCode::kFailedPrecondition);
  pull.set_client_id(a);
  EXPECT_TRUE(coordinator_->ModelFor(pull).ok());
}

TEST_F(RoundCoordinatorTest, DeadlineClosesWithQuorumOrStartsOver) {
  Make(4, /*rounds=*/1);
  std::vector<std::string> ids;
  auto t = OpenRoundOfFour(ids);
  ASSERT_TRUE(Submit(Header(ids[0], t, 1), Model(8, 8)).ok());
  // One of four before the deadline: below the quorum of two.
  clock_.Advance(absl::Seconds(61));
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
  EXPECT_EQ(coordinator_->current_round(), 1u);
  EXPECT_TRUE(reports_.empty());

  // The round starts over with a new task id; two report, two straggle.
  ASSERT_TRUE(coordinator_->RunOnce());
  auto t2 = Task(ids[0]);
  EXPECT_NE(t2.task_id(), t.task_id());
  ASSERT_TRUE(Submit(Header(ids[0], t2, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Submit(Header(ids[1], Task(ids[1]), 1), Model(4, 4)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());  // not late yet
  clock_.Advance(absl::Seconds(61));
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(3, 3)));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_EQ(reports_[0].dropped, 2);
  EXPECT_TRUE(coordinator_->done());
}

TEST_F(RoundCoordinatorTest, PausedClientsAreCountedAndGivenGrace) {
  paused_grace_ = absl::Seconds(120);
  Make(4, /*rounds=*/2);
  std::vector<std::string> ids;
  auto t = OpenRoundOfFour(ids);
  EXPECT_TRUE(absl::IsNotFound(Heartbeat("nobody", t, true)));
  v1::GetTaskResponse wrong = t;
  wrong.set_task_id("other");
  EXPECT_TRUE(absl::IsInvalidArgument(Heartbeat(ids[1], wrong, true)));
  // a reports, b is paused under memory pressure, c and d are silent.
  ASSERT_TRUE(Submit(Header(ids[0], t, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Heartbeat(ids[1], t, true).ok());
  clock_.Advance(absl::Seconds(61));
  // Below the quorum of two past the deadline, but b is alive: wait.
  EXPECT_FALSE(coordinator_->RunOnce());
  clock_.Advance(absl::Seconds(60));
  ASSERT_TRUE(Heartbeat(ids[1], t, true).ok());
  EXPECT_FALSE(coordinator_->RunOnce());
  // b resumes and reports: the quorum closes the round.
  ASSERT_TRUE(Heartbeat(ids[1], t, false).ok());
  ASSERT_TRUE(Submit(Header(ids[1], t, 1), Model(4, 4)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_EQ(reports_[0].stragglers, 2);
  EXPECT_EQ(reports_[0].paused_stragglers, 0);

  // Round 2: c paused and still out when the quorum closes the round.
  for (const auto& id : ids) Task(id);  // all still there (liveness)
  ASSERT_TRUE(coordinator_->RunOnce());
  auto t2 = Task(ids[0]);
  ASSERT_TRUE(Submit(Header(ids[0], t2, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Submit(Header(ids[1], Task(ids[1]), 1), Model(2, 2)).ok());
  ASSERT_TRUE(Heartbeat(ids[2], t2, true).ok());
  clock_.Advance(absl::Seconds(61));
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1].stragglers, 2);
  EXPECT_EQ(reports_[1].paused_stragglers, 1);
}

TEST_F(RoundCoordinatorTest, GraceForPausedClientsEnds) {
  paused_grace_ = absl::Seconds(120);
  Make(4, /*rounds=*/1);
  std::vector<std::string> ids;
  auto t = OpenRoundOfFour(ids);
  ASSERT_TRUE(Submit(Header(ids[0], t, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Heartbeat(ids[1], t, true).ok());
  clock_.Advance(absl::Seconds(61));
  EXPECT_FALSE(coordinator_->RunOnce());
  // Paused past the grace: the round starts over as without it.
  clock_.Advance(absl::Seconds(120));
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(reports_.empty());
  EXPECT_EQ(coordinator_->current_round(), 1u);
}

TEST_F(RoundCoordinatorTest, ReleasedClientIsAwayNotDead) {
  paused_grace_ = absl::Minutes(5);
  Make(4, /*rounds=*/2);
  std::vector<std::string> ids;
  auto t = OpenRoundOfFour(ids);
  ASSERT_TRUE(Submit(Header(ids[0], t, 1), Model(2, 2)).ok());
  // b pauses, then releases its memory (and falls silent); c pauses and
  // falls silent; d is silent throughout.
  ASSERT_TRUE(Heartbeat(ids[1], t, true).ok());
  ASSERT_TRUE(Heartbeat(ids[1], t, v1::HeartbeatRequest::RELEASED).ok());
  ASSERT_TRUE(Heartbeat(ids[2], t, true).ok());
  clock_.Advance(absl::Seconds(61));
  EXPECT_FALSE(coordinator_->RunOnce());  // below the quorum: grace
  // Past the liveness window (2 min) a silent paused board counts as gone,
  // but a released one is waiting for its supervisor: still grace.
  clock_.Advance(absl::Seconds(120));
  EXPECT_FALSE(coordinator_->RunOnce());
  // b is restarted, rejoins under its name, resumes and reports: quorum.
  const std::string b2 = Join("b");
  auto tb = Task(b2);
  ASSERT_EQ(tb.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(tb.task_id(), t.task_id());
  ASSERT_TRUE(Submit(Header(b2, tb, 1), Model(4, 4)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_EQ(reports_[0].stragglers, 2);
  EXPECT_EQ(reports_[0].paused_stragglers, 0);  // c went silent
  EXPECT_EQ(reports_[0].released_stragglers, 0);

  // Round 2: d releases and is still away when the quorum closes it.
  for (const auto& id : {ids[0], b2, ids[2], ids[3]}) Task(id);
  ASSERT_TRUE(coordinator_->RunOnce());
  auto t2 = Task(ids[0]);
  ASSERT_TRUE(Submit(Header(ids[0], t2, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Submit(Header(b2, Task(b2), 1), Model(2, 2)).ok());
  ASSERT_TRUE(Heartbeat(ids[3], t2, v1::HeartbeatRequest::RELEASED).ok());
  clock_.Advance(absl::Seconds(61));
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1].stragglers, 2);
  EXPECT_EQ(reports_[1].paused_stragglers, 1);
  EXPECT_EQ(reports_[1].released_stragglers, 1);
}

TEST_F(RoundCoordinatorTest, RejoinUnderSameNameTakesOverTheRoundSlot) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  auto tb = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb, 2), Model(6, 6)).ok());
  std::string a2 = Join("a");  // a restarted mid-round
  EXPECT_NE(a, a2);
  EXPECT_EQ(coordinator_->GetTask(a, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Submit(Header(a, ta, 2), Model(0, 0)).code(),
            absl::StatusCode::kNotFound);
  // The new id gets the same task, so it can resume it from a checkpoint.
  auto ta2 = Task(a2);
  ASSERT_EQ(ta2.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta2.task_id(), ta.task_id());
  EXPECT_FALSE(coordinator_->RunOnce());  // still waits for a
  ASSERT_TRUE(Submit(Header(a2, ta2, 2), Model(2, 2)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(4, 4)));
  // A client that already reported does not get a second slot.
  Join("b");
  EXPECT_EQ(coordinator_->history().back().participants, 2);
}

TEST_F(RoundCoordinatorTest, SnapshotRestoresRoundRegistryAndModel) {
  Make(2, /*rounds=*/3);
  std::vector<FederationSnapshot> snapshots;
  coordinator_->SetSnapshotSink(
      [&](const FederationSnapshot& s) { snapshots.push_back(s); });
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  ASSERT_TRUE(Submit(Header(a, ta, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 1), Model(4, 4)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_EQ(snapshots[0].next_round, 2u);
  EXPECT_EQ(snapshots[0].clients.size(), 2u);
  EXPECT_EQ(snapshots[0].history.size(), 1u);

  // A new coordinator (a restarted server) continues at round 2 with the
  // same ids, model and, for the same seed, the same task.
  ASSERT_TRUE(coordinator_->RunOnce());
  const std::string task2 = Task(a).task_id();
  Make(2, /*rounds=*/3);
  ASSERT_TRUE(coordinator_->Restore(snapshots[0]).ok());
  EXPECT_EQ(coordinator_->current_round(), 2u);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(3, 3)));
  ASSERT_TRUE(coordinator_->RunOnce());
  auto t = Task(a);
  EXPECT_EQ(t.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(t.round(), 2u);
  EXPECT_EQ(t.task_id(), task2);
  EXPECT_EQ(coordinator_->history().size(), 1u);

  FederationSnapshot wrong = snapshots[0];
  wrong.global =
      std::make_shared<const NamedTensors>(NamedTensors{{"w", at::zeros({3})}});
  EXPECT_EQ(coordinator_->Restore(wrong).code(),
            absl::StatusCode::kInvalidArgument);
}

// Issue: hostile and broken boards. Each test below failed on the code
// before the fix it pins.

TEST_F(RoundCoordinatorTest, ABoardWhoseUpdateWasRefusedIsNotAwaited) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  NamedTensors nan = Model(1, 1);
  nan[0].tensor[0][1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Submit(Header(a, ta, 5), nan).code(),
            absl::StatusCode::kInvalidArgument);
  // A forged header for another task does not excuse anyone.
  auto forged = Header(b, tb, 5);
  forged.set_task_id("r1-forged");
  coordinator_->CountRefusedUpdate(forged, "bad update");
  coordinator_->CountRefusedUpdate(Header(a, ta, 5),
                                   "bad update");  // as the service does
  EXPECT_FALSE(coordinator_->RunOnce());           // b is still awaited
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(4, 4)).ok());
  // Closed on b alone, long before the deadline.
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(4, 4)));
}

// A board refused once is not awaited; a valid update it sends after all
// counts, and it is awaited again: counted both ways, the round would close
// one honest board short (handing a robust rule's majority to whoever sent
// the refused update) and say none was cut off.
TEST_F(RoundCoordinatorTest, ARefusedBoardThatSendsAValidUpdateCountsOnce) {
  Make(3);
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b), tc = Task(c);
  NamedTensors nan = Model(1, 1);
  nan[0].tensor[0][1] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_EQ(Submit(Header(a, ta, 5), nan).code(),
            absl::StatusCode::kInvalidArgument);
  coordinator_->CountRefusedUpdate(Header(a, ta, 5),
                                   "bad update");  // as the service does
  // Not offered the task again.
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(2, 2)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());  // c is still awaited
  ASSERT_TRUE(Submit(Header(c, tc, 5), Model(6, 6)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 3);
  EXPECT_EQ(reports_[0].cut_off, 0);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(3, 3)));
}

// A refusal survives a rejoin: the new id is not offered the task either.
TEST_F(RoundCoordinatorTest, ARejoinDoesNotWashARefusalOff) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  coordinator_->CountRefusedUpdate(Header(a, ta, 5), "bad update");
  const std::string a2 = Join("a");
  EXPECT_EQ(Task(a2).action(), v1::GetTaskResponse::WAIT);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(2, 2)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // closed on b: a2 is not awaited
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 1);
}

// Krum with f = 1 aggregates 5 updates at least: a round left with 4 (one
// board refused) is given up at once and opened again, never published
// unchanged as if it were done.
TEST_F(RoundCoordinatorTest, ARoundNeverClosesBelowItsStrategysMinimum) {
  StrategyOptions krum;
  krum.name = "krum";
  krum.byzantine = 1;
  krum.spill_dir = ::testing::TempDir();
  auto made = MakeStrategy(krum, Model(0, 0));
  ASSERT_TRUE(made.ok()) << made.status();
  strategy_ = *std::move(made);
  Make(5);
  std::vector<std::string> ids;
  for (const char* n : {"a", "b", "c", "d", "e"}) ids.push_back(Join(n));
  ASSERT_TRUE(coordinator_->RunOnce());
  const auto first = Task(ids[0]);
  coordinator_->CountRefusedUpdate(Header(ids[0], first, 5), "bad update");
  for (size_t i = 1; i < ids.size(); ++i) {
    ASSERT_TRUE(Submit(Header(ids[i], Task(ids[i]), 5), Model(1, 1)).ok());
  }
  ASSERT_TRUE(coordinator_->RunOnce());  // given up, long before the deadline
  EXPECT_TRUE(reports_.empty());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
  ASSERT_TRUE(coordinator_->RunOnce());  // opened again
  const auto retry = Task(ids[0]);
  EXPECT_EQ(retry.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(retry.round(), 1u);
  EXPECT_NE(retry.task_id(), first.task_id());
  // With all five it closes.
  for (const std::string& id : ids) {
    ASSERT_TRUE(Submit(Header(id, Task(id), 5), Model(1, 1)).ok());
  }
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_TRUE(reports_[0].refused_result.empty()) << reports_[0].refused_result;
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(1, 1)));
}

}  // namespace
}  // namespace fedberry::server::round_coordinator_test
