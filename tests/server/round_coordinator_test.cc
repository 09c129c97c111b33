#include "server/round_coordinator.h"

#include <gtest/gtest.h>

#include <deque>

#include "server/federation_checkpoint.h"

namespace fedberry::server {
namespace {

using runtime::NamedTensors;

NamedTensors Model(float w, float b) {
  return {{"w", torch::full({2, 2}, w)}, {"b", torch::full({2}, b)}};
}

bool SameModel(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || !a[i].tensor.equal(b[i].tensor)) return false;
  }
  return true;
}

class RoundCoordinatorTest : public ::testing::Test {
 protected:
  void Make(int clients_per_round, int rounds = 2,
            const std::string& planner = "uniform") {
    CoordinatorOptions o;
    o.rounds = rounds;
    o.min_clients_per_round = clients_per_round;
    o.min_clients_to_start = clients_per_round;
    o.round_deadline = absl::Seconds(60);
    o.paused_grace = paused_grace_;
    o.quorum = 0.5;
    o.train.set_model("test");
    if (planner != "uniform") {
      o.train.set_local_steps(10);
      o.train.set_batch_size(4);
      o.planning.planner = planner;
    }
    coordinator_ = std::make_unique<RoundCoordinator>(
        o, Model(0, 0),
        [this](const NamedTensors& m) -> absl::StatusOr<runtime::EvalResult> {
          ++evaluations_;
          return runtime::EvalResult{10, 0.5, 0.75};
        },
        [this](const RoundReport& r) { reports_.push_back(r); }, clock_);
  }

  std::string Join(const std::string& name) {
    v1::JoinRequest r;
    r.set_client_name(name);
    r.set_num_samples(10);
    auto j = coordinator_->Join(r);
    EXPECT_TRUE(j.ok()) << j.status();
    return j->client_id();
  }

  v1::GetTaskResponse Task(const std::string& id) {
    auto t = coordinator_->GetTask(id, absl::ZeroDuration());
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  }

  v1::UpdateHeader Header(const std::string& id, const v1::GetTaskResponse& t,
                          uint64_t samples) {
    v1::UpdateHeader h;
    h.set_client_id(id);
    h.set_round(t.round());
    h.set_task_id(t.task_id());
    h.set_num_samples(samples);
    return h;
  }

  absl::Status Submit(const v1::UpdateHeader& h, const NamedTensors& m) {
    if (auto s = coordinator_->BeginUpdate(h); !s.ok()) return s.status();
    return coordinator_->SubmitUpdate(h, m).status();
  }

  absl::Status Heartbeat(const std::string& id, const v1::GetTaskResponse& t,
                         bool paused) {
    return Heartbeat(
        id, t,
        paused ? v1::HeartbeatRequest::PAUSED : v1::HeartbeatRequest::TRAINING);
  }
  absl::Status Heartbeat(const std::string& id, const v1::GetTaskResponse& t,
                         v1::HeartbeatRequest::State state) {
    v1::HeartbeatRequest h;
    h.set_client_id(id);
    h.set_round(t.round());
    h.set_task_id(t.task_id());
    h.set_state(state);
    return coordinator_->Heartbeat(h);
  }

  // Joins boards a, b, c and d, opens a round for all four (Make(4)) and
  // returns a's task.
  v1::GetTaskResponse OpenRoundOfFour(std::vector<std::string>& ids) {
    for (const char* n : {"a", "b", "c", "d"}) ids.push_back(Join(n));
    EXPECT_TRUE(coordinator_->RunOnce());
    return Task(ids[0]);
  }

  absl::Duration paused_grace_ = absl::ZeroDuration();
  SimulatedClock clock_;
  std::unique_ptr<RoundCoordinator> coordinator_;
  std::vector<RoundReport> reports_;
  int evaluations_ = 0;
};

TEST_F(RoundCoordinatorTest, WaitsForClientsThenRunsRoundsToDone) {
  Make(2, /*rounds=*/2);
  std::string a = Join("a");
  EXPECT_FALSE(coordinator_->RunOnce());  // one client: no round yet
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  std::string b = Join("b");
  EXPECT_TRUE(coordinator_->RunOnce());
  for (int round = 1; round <= 2; ++round) {
    auto ta = Task(a), tb = Task(b);
    ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
    ASSERT_EQ(tb.action(), v1::GetTaskResponse::TRAIN);
    EXPECT_EQ(ta.round(), static_cast<uint64_t>(round));
    EXPECT_EQ(ta.task_id(), tb.task_id());
    EXPECT_EQ(ta.config().model(), "test");
    ASSERT_TRUE(Submit(Header(a, ta, 1), Model(round, 1)).ok());
    EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);  // reported
    EXPECT_FALSE(coordinator_->RunOnce());                   // b still training
    ASSERT_TRUE(Submit(Header(b, tb, 3), Model(round + 4, 5)).ok());
    EXPECT_TRUE(coordinator_->RunOnce());  // closes
    // (1*r + 3*(r+4))/4 = r + 3; (1 + 15)/4 = 4
    EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(round + 3, 4)));
    if (round == 1) {
      EXPECT_TRUE(coordinator_->RunOnce());  // opens round 2
    }
  }
  EXPECT_TRUE(coordinator_->done());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1].round, 2u);
  EXPECT_EQ(reports_[1].participants, 2);
  EXPECT_EQ(reports_[1].dropped, 0);
  ASSERT_TRUE(reports_[1].eval.has_value());
  EXPECT_DOUBLE_EQ(reports_[1].eval->accuracy, 0.75);
  EXPECT_EQ(evaluations_, 2);
}

v1::UpdateHeader WithSpeed(v1::UpdateHeader h, double samples_per_second) {
  h.mutable_resources()->set_samples_per_second(samples_per_second);
  return h;
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

  auto files = EncodeFederationCheckpoint(snapshots[0], "test");
  ASSERT_TRUE(files.ok()) << files.status();
  checkpoint::LoadedCheckpoint loaded;
  loaded.name = "ckpt-00000001";
  for (auto& f : *files) loaded.files[f.name] = f.bytes;
  auto decoded = DecodeFederationCheckpoint(loaded);
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
  shape[1].tensor = torch::zeros({3});
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
  wrong.global = std::make_shared<const NamedTensors>(
      NamedTensors{{"w", torch::zeros({3})}});
  EXPECT_EQ(coordinator_->Restore(wrong).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RoundCoordinatorTest, ShutdownEndsLongPolls) {
  Make(2);
  std::string a = Join("a");
  coordinator_->Shutdown();
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  EXPECT_TRUE(coordinator_->done());
}

}  // namespace
}  // namespace fedberry::server
