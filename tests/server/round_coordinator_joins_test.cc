// RoundCoordinator: Joins, the registry and the join gate, differential
// privacy's draws, a site gateway's parent rounds.
#include "tests/server/testing/round_coordinator_fixture.h"

namespace fedberry::server::round_coordinator_test {
namespace {

// Board-side eligibility: a board whose poll declines is never selected,
// the round runs with the others, and its decline is counted apart from
// failures; once it polls without declining it is selected again.
TEST_F(RoundCoordinatorTest, ADecliningBoardSitsRoundsOutAndIsCounted) {
  Make(2, 2);
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_
                  ->GetTask(c, absl::ZeroDuration(),
                            Declining("SoC at 71.5 C, over the 70 C limit"))
                  .ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::TRAIN);
  auto tc = coordinator_->GetTask(
      c, absl::ZeroDuration(), Declining("SoC at 71.5 C, over the 70 C limit"));
  EXPECT_EQ(tc->action(), v1::GetTaskResponse::WAIT);
  std::optional<BoardRow> row = RowOf(coordinator_->Boards(), "c");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, BoardState::kDeclined);
  EXPECT_EQ(row->condition.declined(), "SoC at 71.5 C, over the 70 C limit");
  EXPECT_EQ(row->condition.soc_celsius(), 71.5);
  auto ta = Task(a), tb = Task(b);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].selected, 2);
  EXPECT_EQ(reports_[0].declined, 1);
  EXPECT_EQ(reports_[0].dropped, 0);
  // Cool again: it polls without declining and is selected in round 2.
  EXPECT_EQ(RowOf(coordinator_->Boards(), "c")->state, BoardState::kDeclined);
  Task(c);
  EXPECT_EQ(RowOf(coordinator_->Boards(), "c")->state, BoardState::kIdle);
  ASSERT_TRUE(coordinator_->RunOnce());  // round 2: every available board
  EXPECT_EQ(Task(c).action(), v1::GetTaskResponse::TRAIN);
}

// A selected board that declines before it trains (it got hot while the
// round opened) is not awaited: the round closes on the others, and the
// board counts as declined, not dropped.
TEST_F(RoundCoordinatorTest, ASelectedBoardThatDeclinesIsNotAwaited) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  auto tb = coordinator_->GetTask(b, absl::ZeroDuration(),
                                  Declining("outside the training window"));
  EXPECT_EQ(tb->action(), v1::GetTaskResponse::WAIT);
  EXPECT_EQ(RowOf(coordinator_->Boards(), "b")->state, BoardState::kDeclined);
  // Cool again before the round closes: it stays out of this round, and
  // the page does not call its decline a refusal.
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::WAIT);
  EXPECT_EQ(RowOf(coordinator_->Boards(), "b")->state, BoardState::kIdle);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 1);
  EXPECT_EQ(reports_[0].declined, 1);
  EXPECT_EQ(reports_[0].dropped, 0);
  EXPECT_EQ(reports_[0].stragglers, 0);
}

// The fleet page's rows follow a round: idle, training with the progress
// its heartbeats report, then idle with the round it delivered to.
TEST_F(RoundCoordinatorTest, BoardsShowTrainingWithProgressThenIdle) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  EXPECT_EQ(RowOf(coordinator_->Boards(), "a")->state, BoardState::kIdle);
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  v1::HeartbeatRequest h;
  h.set_client_id(a);
  h.set_round(ta.round());
  h.set_task_id(ta.task_id());
  h.set_state(v1::HeartbeatRequest::TRAINING);
  h.set_steps_done(7);
  h.set_steps_planned(20);
  ASSERT_TRUE(coordinator_->Heartbeat(h).ok());
  std::vector<BoardRow> rows = coordinator_->Boards();
  EXPECT_EQ(RowOf(rows, "a")->state, BoardState::kTraining);
  EXPECT_EQ(RowOf(rows, "a")->round, 1u);
  EXPECT_EQ(RowOf(rows, "a")->steps_done, 7u);
  EXPECT_EQ(RowOf(rows, "a")->steps_planned, 20u);
  ASSERT_TRUE(Heartbeat(b, tb, true).ok());
  EXPECT_EQ(RowOf(coordinator_->Boards(), "b")->state, BoardState::kPaused);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  rows = coordinator_->Boards();
  for (const char* name : {"a", "b"}) {
    EXPECT_EQ(RowOf(rows, name)->state, BoardState::kIdle) << name;
    EXPECT_EQ(RowOf(rows, name)->round, 1u) << name;
    EXPECT_EQ(RowOf(rows, name)->steps_planned, 0u) << name;
  }
  clock_.Advance(absl::Minutes(3));  // past the liveness window
  EXPECT_EQ(RowOf(coordinator_->Boards(), "a")->state, BoardState::kGone);
}

// Every round says how long the job has run, from its first round's
// opening; a resumed job goes on from its checkpointed figure.
TEST_F(RoundCoordinatorTest, RoundsCarryTheJobsElapsedTimeAcrossAResume) {
  Make(2, 3);
  std::string a = Join("a"), b = Join("b");
  clock_.Advance(absl::Seconds(30));  // waiting for boards is not the job's
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(coordinator_->RunOnce());  // round 2 opens
  ta = Task(a), tb = Task(b);
  clock_.Advance(absl::Seconds(4));
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_DOUBLE_EQ(reports_[0].elapsed_seconds, 5);
  EXPECT_DOUBLE_EQ(reports_[1].elapsed_seconds, 9);

  FederationSnapshot snapshot;
  snapshot.next_round = 3;
  snapshot.global = std::make_shared<const NamedTensors>(Model(2, 2));
  snapshot.history = reports_;
  Make(2, 3);
  ASSERT_TRUE(coordinator_->Restore(snapshot).ok());
  reports_.clear();
  clock_.Advance(absl::Hours(1));  // the server was down: not counted
  a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  ta = Task(a), tb = Task(b);
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].round, 3u);
  EXPECT_DOUBLE_EQ(reports_[0].elapsed_seconds, 11);
}

// The version gate: an older client, or one that does not say, is refused
// at join with CLIENT_TOO_OLD and an upgrade message, and listed on the
// fleet page as refused; once upgraded it joins and the refusal goes.
TEST_F(RoundCoordinatorTest, AnOlderClientIsToldToUpgradeAndListedRefused) {
  version_gate_ = *VersionGate::Parse("0.2.0");
  Make(1);
  for (const char* old : {"0.1.9", ""}) {
    v1::JoinRequest r;
    r.set_client_name("old-board");
    r.set_num_samples(10);
    r.set_client_version(old);
    auto j = coordinator_->Join(r);
    ASSERT_EQ(j.status().code(), absl::StatusCode::kFailedPrecondition) << old;
    EXPECT_EQ(wire::ReasonOf(j.status()), wire::kReasonClientTooOld);
    EXPECT_NE(j.status().message().find("upgrade fedberry-client"),
              std::string::npos)
        << j.status();
    EXPECT_NE(j.status().message().find("0.2.0 or newer"), std::string::npos);
  }
  EXPECT_EQ(coordinator_->registered_clients(), 0);
  std::optional<BoardRow> row = RowOf(coordinator_->Boards(), "old-board");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, BoardState::kRefused);
  EXPECT_NE(row->last_refusal.find("upgrade"), std::string::npos);
  v1::JoinRequest r;
  r.set_client_name("old-board");
  r.set_num_samples(10);
  r.set_client_version("0.10.0");  // newer: numbers, not text, compare
  ASSERT_TRUE(coordinator_->Join(r).ok());
  row = RowOf(coordinator_->Boards(), "old-board");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, BoardState::kIdle);
  EXPECT_EQ(row->client_version, "0.10.0");
  EXPECT_EQ(coordinator_->Boards().size(), 1u);
}

// The 40 refused joins with 1 MB versions: the fleet page and its
// JSON stay small whatever the boards sent (each was about 40 MB).
TEST_F(RoundCoordinatorTest, RefusedJoinsWithMegabyteVersionsKeepThePageSmall) {
  version_gate_ = *VersionGate::Parse("0.2.0");
  Make(1);
  for (int i = 0; i < 40; ++i) {
    v1::JoinRequest r;
    r.set_client_name(absl::StrCat("old-", i));
    r.set_num_samples(10);
    r.set_client_version(std::string(1 << 20, 'v'));
    ASSERT_FALSE(coordinator_->Join(r).ok());
  }
  FleetStatus fleet;
  fleet.now = clock_.Now();
  fleet.boards = coordinator_->Boards();
  ASSERT_EQ(fleet.boards.size(), 40u);
  const std::string page = FleetPage(fleet);
  const std::string json = FleetJson(fleet);
  std::cout << "40 refused joins with 1 MiB versions: page " << page.size()
            << " bytes, JSON " << json.size() << " bytes\n";
  EXPECT_LT(page.size(), 64u << 10);
  EXPECT_LT(json.size(), 64u << 10);
  for (const BoardRow& row : fleet.boards) {
    EXPECT_LE(row.client_version.size(), 64u) << row.name;
  }
}

// A server restarted with a higher minimum does not restore the boards
// below it: they join again and are told to upgrade.
TEST_F(RoundCoordinatorTest, ARaisedMinimumDropsOlderBoardsOnRestore) {
  version_gate_ = *VersionGate::Parse("0.2.0");
  Make(1);
  FederationSnapshot snapshot;
  snapshot.next_round = 2;
  snapshot.global = std::make_shared<const NamedTensors>(Model(1, 2));
  snapshot.clients.push_back({"c0001-abc", "old", 10, false, 0, 0, "0.1.0"});
  snapshot.clients.push_back({"c0002-def", "new", 10, false, 0, 0, "0.2.1"});
  ASSERT_TRUE(coordinator_->Restore(snapshot).ok());
  EXPECT_EQ(coordinator_->registered_clients(), 1);
  EXPECT_EQ(
      coordinator_->GetTask("c0001-abc", absl::ZeroDuration()).status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(RowOf(coordinator_->Boards(), "new")->client_version, "0.2.1");
}

// Under differential privacy: a site gateway cannot join (its update is
// many boards'), the round's config carries the clip bound, the mean is
// unweighted over the expected cohort, every round is charged, and a draw
// too small to run is charged too.
// A board that declares itself a site gateway is refused unless
// --site_gateways names it: under DP its forwarded sum counted as that many
// clipped updates.
TEST_F(RoundCoordinatorTest, OnlyANamedSiteGatewayMayDeclareBoards) {
  site_gateways_ = "site:2";
  Make(2);
  v1::JoinRequest impostor;
  impostor.set_client_name("board-7");
  impostor.set_num_samples(20);
  impostor.set_boards(1000);
  const auto refused = coordinator_->Join(impostor);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied)
      << refused.status();
  impostor.set_client_name("site");
  EXPECT_EQ(coordinator_->Join(impostor).status().code(),
            absl::StatusCode::kInvalidArgument);
  impostor.set_boards(2);
  EXPECT_TRUE(coordinator_->Join(impostor).ok());
  EXPECT_EQ(coordinator_->registered_clients(), 1);
}

TEST_F(RoundCoordinatorTest, UnderDifferentialPrivacyEveryDrawIsCharged) {
  DpOptions dp;
  dp.clip = 10;
  dp.noise_multiplier = 1e-9;  // the mean stays visible
  dp.noise_seed = 1;
  budget_ = std::make_shared<PrivacyBudget>(dp);
  selection_ = std::make_shared<const PoissonCohorts>(1.0);
  site_gateways_ = "site:2";
  Make(2);
  // A site gateway of 2 boards: in every draw (its boards are drawn at the
  // site), it sends their clipped sum with its count.
  v1::JoinRequest site_join;
  site_join.set_client_name("site");
  site_join.set_num_samples(20);
  site_join.set_boards(2);
  auto site = coordinator_->Join(site_join);
  ASSERT_TRUE(site.ok()) << site.status();
  const std::string s = site->client_id();
  ASSERT_TRUE(coordinator_->GetTask(s, absl::ZeroDuration()).ok());
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b), ts = Task(s);
  EXPECT_EQ(ta.config().dp_clip(), 10);
  EXPECT_EQ(ts.config().dp_sampling_rate(), 1.0);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 10), Model(3, 3)).ok());
  v1::UpdateHeader sum = Header(s, ts, 20);
  sum.mutable_metrics()->mutable_forwarded_sum()->set_updates(2);
  ASSERT_TRUE(Submit(sum, Model(2, 2)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  // (1 + 3 + 2) over the expected 1 x 4 boards, not the weighted mean.
  EXPECT_NEAR(coordinator_->global_model()->at(0).tensor[0][0].item<float>(),
              1.5, 1e-5);
  ASSERT_TRUE(reports_.back().privacy.has_value());
  EXPECT_EQ(reports_.back().privacy->steps, 1);
  EXPECT_DOUBLE_EQ(reports_.back().privacy->clipped_fraction, 0);
}

TEST_F(RoundCoordinatorTest, UnderDifferentialPrivacyAShortDrawIsCharged) {
  DpOptions dp;
  dp.clip = 1;
  dp.noise_multiplier = 1;
  auto budget = std::make_shared<PrivacyBudget>(dp);
  budget_ = budget;
  selection_ = std::make_shared<const PoissonCohorts>(1e-12);  // draws none
  Make(2);
  Join("a");
  Join("b");
  EXPECT_FALSE(coordinator_->RunOnce());
  EXPECT_FALSE(coordinator_->RunOnce());
  EXPECT_TRUE(absl::StrContains(budget->State(), "\"steps\":2"))
      << budget->State();
  EXPECT_GT(budget->epsilon(), 0);
}

// Every snapshot holds the history: per-board entries there would grow it
// with boards x rounds (810 bytes a board a round) and be rewritten whole
// each round. They go to the report sink (clients.jsonl) only.
TEST_F(RoundCoordinatorTest, TheSnapshotsHistoryKeepsNoPerBoardEntries) {
  Make(2, /*rounds=*/2);
  std::vector<FederationSnapshot> snapshots;
  coordinator_->SetSnapshotSink(
      [&](const FederationSnapshot& s) { snapshots.push_back(s); });
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(a, Task(a), 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].clients.size(), 2u);  // the sink hears the boards
  ASSERT_EQ(snapshots.size(), 1u);
  ASSERT_EQ(snapshots[0].history.size(), 1u);
  EXPECT_EQ(snapshots[0].history[0].participants, 2);
  EXPECT_TRUE(snapshots[0].history[0].clients.empty());
  EXPECT_EQ(snapshots[0].clients.size(), 2u);  // the registry: O(boards)
  EXPECT_TRUE(coordinator_->history()[0].clients.empty());
}

// A site gateway (tiers) runs its parent's round: the parent's round number,
// config and model. Its result is its boards' weighted mean, weighing their
// weights summed, handed to the upstream sink; it has no end of its own.
TEST_F(RoundCoordinatorTest, AGatewayRunsItsParentsRoundAndRelaysTheMean) {
  upstream_ = true;
  Make(2, /*rounds=*/1);
  const std::string a = Join("a"), b = Join("b");
  EXPECT_FALSE(coordinator_->RunOnce());  // nothing from the parent yet
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  EXPECT_EQ(coordinator_->total_rounds(), 0u);  // not its own: unknown yet
  ASSERT_TRUE(coordinator_->OfferRound(ParentRound(Model(1, 1))).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(coordinator_->total_rounds(), 9u);
  const v1::GetTaskResponse ta = Task(a), tb = Task(b);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta.round(), 7u);
  EXPECT_EQ(ta.total_rounds(), 9u);
  EXPECT_EQ(ta.config().seed(), 42u);
  EXPECT_EQ(ta.config().local_steps(), 3u);
  v1::PullModelRequest pull;
  pull.set_client_id(a);
  pull.set_round(ta.round());
  pull.set_task_id(ta.task_id());
  auto pulled = coordinator_->ModelFor(pull);
  ASSERT_TRUE(pulled.ok()) << pulled.status();
  EXPECT_TRUE(SameModel(**pulled, Model(1, 1)));
  // The parent's steps x batch bound each board: 12 samples.
  EXPECT_EQ(Submit(Header(a, ta, 13), Model(2, 2)).code(),
            absl::StatusCode::kInvalidArgument);
  v1::UpdateHeader ha = Header(a, ta, 4), hb = Header(b, tb, 12);
  ha.mutable_metrics()->set_train_loss(1.0);
  ha.mutable_metrics()->set_train_accuracy(0.5);
  hb.mutable_metrics()->set_train_loss(2.0);
  hb.mutable_metrics()->set_train_accuracy(0.9);
  ASSERT_TRUE(Submit(ha, Model(2, 2)).ok());
  ASSERT_TRUE(Submit(hb, Model(6, 6)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(sent_up_.size(), 1u);
  const UpstreamResult& r = sent_up_[0];
  EXPECT_EQ(r.upstream_task_id, "parent-task");
  EXPECT_EQ(r.weight, 16u);
  EXPECT_EQ(r.participants, 2);
  ASSERT_TRUE(r.mean.ok()) << r.mean.status();
  EXPECT_TRUE(SameModel(*r.mean, Model(5, 5)));  // (4*2 + 12*6) / 16
  EXPECT_DOUBLE_EQ(r.metrics.train_loss(), 1.75);
  EXPECT_DOUBLE_EQ(r.metrics.train_accuracy(), 0.8);
  // Its rounds are the parent's: none opens until the next one comes,
  // and the job ends when the parent's does.
  EXPECT_FALSE(coordinator_->done());
  EXPECT_FALSE(coordinator_->RunOnce());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::WAIT);
  coordinator_->Shutdown();
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
}

TEST_F(RoundCoordinatorTest, OnlyAGatewayTakesAParentsRoundAndOnlyOfItsModel) {
  Make(2);
  EXPECT_EQ(coordinator_->OfferRound(ParentRound(Model(1, 1))).code(),
            absl::StatusCode::kFailedPrecondition);
  upstream_ = true;
  Make(2);
  EXPECT_EQ(
      coordinator_->OfferRound(ParentRound({{"w", at::zeros({3})}})).code(),
      absl::StatusCode::kInvalidArgument);
}

// A push refused between rounds (or while a full asynchronous buffer is
// published) is counted once, in the next round's report.
TEST_F(RoundCoordinatorTest, APushRefusedBetweenRoundsCountsInTheNext) {
  Make(1, /*rounds=*/2);
  const std::string a = Join("a");
  ASSERT_TRUE(coordinator_->RunOnce());
  const v1::GetTaskResponse t1 = Task(a);
  ASSERT_TRUE(Submit(Header(a, t1, 1), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // round 1 closes
  coordinator_->CountRefusedUpdate(Header(a, t1, 1), "round 1 is closed");
  ASSERT_TRUE(coordinator_->RunOnce());  // round 2 opens
  ASSERT_TRUE(Submit(Header(a, Task(a), 1), Model(2, 2)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[0].rejected, 0);
  EXPECT_EQ(reports_[1].rejected, 1);
}

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

}  // namespace
}  // namespace fedberry::server::round_coordinator_test
