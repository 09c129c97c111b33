#include "server/round_coordinator.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <iostream>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/testing/simulated_clock.h"
#include "proto/wire.h"
#include "runtime/training_plan.h"
#include "server/federation_checkpoint.h"
#include "server/privacy/privacy_budget.h"

namespace fedberry::server::round_coordinator_test {
namespace {

using runtime::NamedTensors;

NamedTensors Model(float w, float b) {
  return {{"w", at::full({2, 2}, w)}, {"b", at::full({2}, b)}};
}

v1::TrainingPlan TestPlan() {
  v1::TrainConfig config;
  config.set_model("lenet5");
  config.set_learning_rate(0.05);
  config.set_momentum(0.9);
  return runtime::DefaultImagePlan(config);
}

// The federation checkpoint of `snapshot` as the store would load it.
checkpoint::LoadedCheckpoint AsLoaded(
    const FederationSnapshot& snapshot,
    const v1::TrainingPlan& plan = TestPlan()) {
  auto files = EncodeFederationCheckpoint(snapshot, plan);
  EXPECT_TRUE(files.ok()) << files.status();
  checkpoint::LoadedCheckpoint loaded;
  loaded.name = "ckpt-00000001";
  if (files.ok()) {
    for (auto& f : *files) loaded.files[f.name] = f.bytes;
  }
  return loaded;
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
    o.max_update_ratio = max_update_ratio_;
    o.max_clients = max_clients_;
    o.target_updates = target_updates_;
    o.over_select = over_select_;
    o.overlap_evaluation = overlap_evaluation_;
    o.board_eval = board_eval_;
    o.selection = selection_;
    o.budget = budget_;
    o.version_gate = version_gate_;
    o.site_gateways = SiteGateways::Parse(site_gateways_).value();
    o.async = async_;
    if (upstream_) {
      o.upstream = true;
      o.upstream_sink = [this](UpstreamResult r) {
        sent_up_.push_back(std::move(r));
      };
    }
    auto made = RoundCoordinator::Create(
        o, Model(0, 0),
        [this](const NamedTensors& m,
               int64_t max_samples) -> absl::StatusOr<runtime::EvalResult> {
          if (evaluation_gate_) evaluation_gate_(max_samples);
          ++evaluations_;
          // A model beyond any sane scale evaluates to NaN, as a real one
          // whose activations overflow does.
          if (m[0].tensor.abs().max().item<float>() > 1e30) {
            return runtime::EvalResult{10, std::nan(""), 0.1};
          }
          return runtime::EvalResult{10, 0.5, 0.75};
        },
        [this](const RoundReport& r) { reports_.push_back(r); }, clock_,
        std::move(strategy_));
    ASSERT_TRUE(made.ok()) << made.status();
    coordinator_ = *std::move(made);
  }

  // Joins and asks for a task once, as a real board does: boards that
  // never ask are not selected.
  std::string Join(const std::string& name) {
    v1::JoinRequest r;
    r.set_client_name(name);
    r.set_num_samples(10);
    auto j = coordinator_->Join(r);
    EXPECT_TRUE(j.ok()) << j.status();
    if (!j.ok()) return "";
    EXPECT_TRUE(
        coordinator_->GetTask(j->client_id(), absl::ZeroDuration()).ok());
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

  // a and b send models of 1 and 3 (5 samples each): the round closes
  // with their mean, 2, accepted.
  void CloseWithHonestUpdates(const std::string& a,
                              const v1::GetTaskResponse& ta,
                              const std::string& b,
                              const v1::GetTaskResponse& tb) {
    ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
    ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
    ASSERT_TRUE(coordinator_->RunOnce());
    EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
    EXPECT_TRUE(reports_.back().refused_result.empty());
  }

  // Boards a and b join; round 1 opens, both push weights of 1e38 (a
  // finite average that evaluates to NaN) and it closes, refused as not
  // finite.
  void CloseOnAModelThatEvaluatesToNaN(std::string& a, std::string& b) {
    a = Join("a");
    b = Join("b");
    ASSERT_TRUE(coordinator_->RunOnce());
    auto ta = Task(a), tb = Task(b);
    ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1e38f, 1)).ok());
    ASSERT_TRUE(Submit(Header(b, tb, 5), Model(1e38f, 1)).ok());
    ASSERT_TRUE(coordinator_->RunOnce());
    ASSERT_FALSE(reports_.empty());
    EXPECT_NE(reports_.back().refused_result.find("not finite"),
              std::string::npos)
        << reports_.back().refused_result;
  }

  absl::Duration paused_grace_ = absl::ZeroDuration();
  // Off for tests of other behaviour, whose models jump from zero.
  double max_update_ratio_ = 0;
  int max_clients_ = 10000;
  SimulatedClock clock_;
  std::unique_ptr<RoundCoordinator> coordinator_;
  std::vector<RoundReport> reports_;
  std::atomic<int> evaluations_{0};
  // Runs first in each evaluation, with its max_samples (0: all).
  std::function<void(int64_t)> evaluation_gate_;
  bool overlap_evaluation_ = false;
  BoardEvalOptions board_eval_;  // off
  std::string site_gateways_;    // --site_gateways
  int target_updates_ = 0;
  double over_select_ = 1.0;
  bool upstream_ = false;               // a site gateway's coordinator (tiers)
  std::unique_ptr<Strategy> strategy_;  // null: options' (fedavg)
  std::vector<UpstreamResult> sent_up_;
  std::shared_ptr<const CohortSelection> selection_;  // null: shared
  std::shared_ptr<RoundBudget> budget_;               // null: none
  VersionGate version_gate_;                          // none
  std::optional<AsyncOptions> async_;                 // sync rounds
};

v1::BoardCondition Declining(const std::string& why) {
  v1::BoardCondition c;
  c.set_declined(why);
  c.set_soc_celsius(71.5);
  return c;
}

std::optional<BoardRow> RowOf(const std::vector<BoardRow>& rows,
                              const std::string& name) {
  for (const BoardRow& r : rows) {
    if (r.name == name) return r;
  }
  return std::nullopt;
}

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

// The issue's 40 refused joins with 1 MB versions: the fleet page and its
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

// The parent's round 7 as a site gateway receives it.
UpstreamRound ParentRound(NamedTensors global) {
  UpstreamRound up;
  up.round = 7;
  up.task_id = "parent-task";
  up.total_rounds = 9;
  up.train.set_model("test");
  up.train.set_local_steps(3);
  up.train.set_batch_size(4);
  up.train.set_seed(42);
  up.global = std::make_shared<const NamedTensors>(std::move(global));
  return up;
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

v1::UpdateHeader WithSpeed(v1::UpdateHeader h, double samples_per_second) {
  h.mutable_resources()->set_samples_per_second(samples_per_second);
  return h;
}

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

// A strategy whose aggregation fails (a full disk under a robust rule's
// spill file, say).
class FailingStrategy : public Strategy {
 public:
  const std::string& name() const override { return name_; }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const NamedTensors>) override {
    return std::make_unique<Aggregator>();
  }

 private:
  struct Aggregator : RoundAggregator {
    absl::Status Add(const NamedTensors&, double) override {
      ++n;
      return absl::OkStatus();
    }
    int updates() const override { return n; }
    absl::StatusOr<NamedTensors> Result() override {
      return absl::InternalError("the spill file is short");
    }
    int n = 0;
  };
  std::string name_ = "failing";
};

TEST_F(RoundCoordinatorTest, AFailedAggregationSaysSoInTheReport) {
  strategy_ = std::make_unique<FailingStrategy>();
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(a, Task(a), 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].refused_result,
            "aggregation failed: the spill file is short");
  EXPECT_FALSE(reports_[0].eval.has_value());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
}

TEST_F(RoundCoordinatorTest, FinitePoisonIsRefusedByTheUpdateBound) {
  max_update_ratio_ = 10;
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  const absl::Status poisoned = Submit(Header(a, ta, 5), Model(1e38f, 1e38f));
  EXPECT_EQ(poisoned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(poisoned.message().find("max_update_ratio"), std::string::npos)
      << poisoned;
  // The refusal changed nothing: a's honest update still counts once.
  CloseWithHonestUpdates(a, ta, b, tb);
}

TEST_F(RoundCoordinatorTest, ANonFiniteResultIsRefusedAndTheModelKept) {
  // The bound is off (the fixture's default): the last line of defence
  // must hold by itself.
  Make(2, /*rounds=*/2);
  std::string a, b;
  ASSERT_NO_FATAL_FAILURE(CloseOnAModelThatEvaluatesToNaN(a, b));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_FALSE(reports_[0].eval.has_value());
  // The job goes on from the model it had.
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  auto tb = Task(b);
  EXPECT_EQ(ta.round(), 2u);
  CloseWithHonestUpdates(a, ta, b, tb);
}

// --overlap_evaluation: boards train round 2 while round 1's model is
// evaluated; round 1 is reported (and persisted with its figures) when its
// evaluation ends, before round 2; the last round is evaluated before DONE.
TEST_F(RoundCoordinatorTest,
       AnOverlappedEvaluationRunsWhileTheNextRoundTrains) {
  overlap_evaluation_ = true;
  absl::Notification full_started, release;
  std::vector<int64_t> asked;  // max_samples of each evaluation, in order
  absl::Mutex asked_mu;
  evaluation_gate_ = [&](int64_t max_samples) {
    bool first_full = false;
    {
      absl::MutexLock lock(&asked_mu);
      asked.push_back(max_samples);
      first_full = max_samples == 0 && !full_started.HasBeenNotified();
    }
    if (first_full) {
      full_started.Notify();
      release.WaitForNotification();
    }
  };
  Make(2, /*rounds=*/2);
  std::vector<FederationSnapshot> snapshots;  // the driver's and the eval's
  absl::Mutex snapshots_mu;
  coordinator_->SetSnapshotSink([&](const FederationSnapshot& s) {
    absl::MutexLock lock(&snapshots_mu);
    snapshots.push_back(s);
  });
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // closes round 1
  full_started.WaitForNotification();
  // Round 1's model is published before its evaluation ends, and round 2
  // trains from it meanwhile.
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  EXPECT_TRUE(reports_.empty());
  ASSERT_TRUE(coordinator_->RunOnce());  // opens round 2
  ta = Task(a);
  tb = Task(b);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta.round(), 2u);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(4, 4)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(6, 6)).ok());
  // Closing round 2 waits for round 1's evaluation.
  std::thread closer([&] { coordinator_->RunOnce(); });
  release.Notify();
  closer.join();
  EXPECT_TRUE(coordinator_->done());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[0].round, 1u);
  ASSERT_TRUE(reports_[0].eval.has_value());
  EXPECT_DOUBLE_EQ(reports_[0].eval->accuracy, 0.75);
  EXPECT_EQ(reports_[1].round, 2u);
  ASSERT_TRUE(reports_[1].eval.has_value());
  // Round 1: a probe, then the whole set; the last round: the whole set.
  EXPECT_EQ(asked, (std::vector<int64_t>{kEvaluationProbeSamples, 0, 0}));
  // Persisted at round 1's close without its figures, again once they
  // came, then at round 2's close with both rounds' figures.
  ASSERT_EQ(snapshots.size(), 3u);
  EXPECT_EQ(snapshots[0].next_round, 2u);
  EXPECT_FALSE(snapshots[0].history.at(0).eval.has_value());
  EXPECT_EQ(snapshots[1].next_round, 2u);
  EXPECT_TRUE(snapshots[1].history.at(0).eval.has_value());
  ASSERT_EQ(snapshots[2].history.size(), 2u);
  EXPECT_TRUE(snapshots[2].history[0].eval.has_value());
  EXPECT_TRUE(snapshots[2].history[1].eval.has_value());
}

TEST_F(RoundCoordinatorTest, AnOverlappedRoundWhoseProbeIsNotFiniteIsRefused) {
  overlap_evaluation_ = true;
  Make(2, /*rounds=*/2);
  std::string a, b;
  ASSERT_NO_FATAL_FAILURE(CloseOnAModelThatEvaluatesToNaN(a, b));
  // Refused at the probe: reported at once, nothing left to evaluate.
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_NE(reports_[0].refused_result.find("on the first 10 samples"),
            std::string::npos)
      << reports_[0].refused_result;
  EXPECT_EQ(evaluations_, 1);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
}

TEST_F(RoundCoordinatorTest, FiguresThatAreNotFiniteAreRefusedOrDropped) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  auto nan_loss = Header(a, ta, 5);
  nan_loss.mutable_metrics()->set_train_loss(std::nan(""));
  EXPECT_EQ(Submit(nan_loss, Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  auto bad_accuracy = Header(a, ta, 5);
  bad_accuracy.mutable_metrics()->set_train_accuracy(-3);
  EXPECT_EQ(Submit(bad_accuracy, Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  // Absurd resource readings do not cost an honest update: they are dropped.
  auto absurd = Header(a, ta, 5);
  absurd.mutable_resources()->set_cpu_utilization(-1e15);
  absurd.mutable_resources()->set_wall_seconds(
      std::numeric_limits<double>::infinity());
  absurd.mutable_resources()->set_cpu_seconds(2.5);
  ASSERT_TRUE(Submit(absurd, Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  const auto& clients = reports_.back().clients;
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_FALSE(clients[0].resources.has_cpu_utilization());
  EXPECT_FALSE(clients[0].resources.has_wall_seconds());
  EXPECT_EQ(clients[0].resources.cpu_seconds(), 2.5);
}

// A board that declared 2^40 samples before the fleet had a median (it
// joined first) is weighed against the fleet's bound, 10 x the median; one
// that declares as much once the fleet is there is refused at join.
TEST_F(RoundCoordinatorTest, ADeclaredSizeCannotHijackTheAverage) {
  Make(4);  // whole epochs; the fixture's boards declare 10 samples
  v1::JoinRequest liar;
  liar.set_client_name("liar");
  liar.set_num_samples(uint64_t{1} << 40);
  auto joined = coordinator_->Join(liar);
  ASSERT_TRUE(joined.ok()) << joined.status();  // no fleet to compare yet
  const std::string l = joined->client_id();
  ASSERT_TRUE(coordinator_->GetTask(l, absl::ZeroDuration()).ok());
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  const auto tl = Task(l);
  const absl::Status hijack =
      Submit(Header(l, tl, uint64_t{1} << 40), Model(0, 0));
  EXPECT_EQ(hijack.code(), absl::StatusCode::kInvalidArgument) << hijack;
  EXPECT_NE(hijack.message().find("at most 100"), std::string::npos) << hijack;
  ASSERT_TRUE(Submit(Header(l, tl, 100), Model(0, 0)).ok());
  for (const std::string& id : {a, b, c}) {
    ASSERT_TRUE(Submit(Header(id, Task(id), 10), Model(13, 13)).ok());
  }
  ASSERT_TRUE(coordinator_->RunOnce());
  // 100 of 130 samples: the most the bound lets one board weigh.
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(3, 3)));
  v1::JoinRequest late = liar;
  late.set_client_name("late-liar");
  const auto refused = coordinator_->Join(late);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("median of 10"), std::string::npos)
      << refused.status();
  late.set_num_samples(100);
  EXPECT_TRUE(coordinator_->Join(late).ok());
}

// The bound is set by boards taking part: 8 joins declaring 100 samples
// that never asked for a task made the median 100, and a real board with
// 15,000 samples was refused.
TEST_F(RoundCoordinatorTest, JoinsThatNeverAskedDoNotSetTheSizeBound) {
  Make(2);
  for (int i = 0; i < 8; ++i) {
    v1::JoinRequest r;
    r.set_client_name(absl::StrCat("silent-", i));
    r.set_num_samples(100);
    ASSERT_TRUE(coordinator_->Join(r).ok());
  }
  EXPECT_FALSE(coordinator_->RunOnce());  // no board asked: nothing opens
  v1::JoinRequest honest;
  honest.set_client_name("honest");
  honest.set_num_samples(15000);
  auto joined = coordinator_->Join(honest);
  EXPECT_TRUE(joined.ok()) << joined.status();
}

TEST_F(RoundCoordinatorTest, AnUpdateWeighsNoMoreThanItsTaskAllows) {
  Make(2);  // whole epochs; each board declared 10 samples at join
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  const absl::Status huge =
      Submit(Header(a, ta, uint64_t{1} << 63), Model(100, 100));
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("at most 10"), std::string::npos) << huge;
  EXPECT_EQ(Submit(Header(a, ta, 11), Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(Submit(Header(a, ta, 10), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 10), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
}

TEST_F(RoundCoordinatorTest, RejoinAfterPushKeepsTheRoundWaitingForOthers) {
  Make(3);
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b), tc = Task(c);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(3, 3)).ok());
  // a crashes after its push and joins again under its name.
  std::string a2 = Join("a");
  EXPECT_EQ(Task(a2).action(), v1::GetTaskResponse::WAIT);  // it reported
  EXPECT_FALSE(coordinator_->RunOnce());  // b and c are still out
  EXPECT_FALSE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(6, 6)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(c, tc, 5), Model(9, 9)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 3);
  EXPECT_EQ(reports_[0].dropped, 0);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(6, 6)));
}

// FedAvg whose second Add blocks until released: an add in progress.
class SecondAddBlocks final : public Strategy {
 public:
  explicit SecondAddBlocks(const NamedTensors& model)
      : fedavg_(*MakeStrategy(StrategyOptions{}, model)) {}
  absl::Notification entered, release;

  const std::string& name() const override { return fedavg_->name(); }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const NamedTensors> global) override {
    auto inner = fedavg_->BeginRound(std::move(global));
    if (!inner.ok()) return inner.status();
    return std::make_unique<Sum>(*this, *std::move(inner));
  }

 private:
  class Sum final : public RoundAggregator {
   public:
    Sum(SecondAddBlocks& outer, std::unique_ptr<RoundAggregator> inner)
        : outer_(outer), inner_(std::move(inner)) {}
    absl::Status Add(const NamedTensors& update, double weight) override {
      if (++adds_ == 2) {
        outer_.entered.Notify();
        outer_.release.WaitForNotification();
      }
      return inner_->Add(update, weight);
    }
    int updates() const override { return inner_->updates(); }
    absl::StatusOr<NamedTensors> Result() override { return inner_->Result(); }

   private:
    SecondAddBlocks& outer_;
    std::unique_ptr<RoundAggregator> inner_;
    int adds_ = 0;
  };
  std::unique_ptr<Strategy> fedavg_;
};

TEST_F(RoundCoordinatorTest, AnUpdateIsAddedOutsideTheLockAndTheCloseWaits) {
  auto strategy = std::make_unique<SecondAddBlocks>(Model(0, 0));
  SecondAddBlocks& blocking = *strategy;
  strategy_ = std::move(strategy);
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  std::thread push(
      [&] { EXPECT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok()); });
  blocking.entered.WaitForNotification();
  // a's add is under way: the coordinator still serves, a second push of
  // a is refused as a duplicate, and a board joins.
  EXPECT_TRUE(absl::IsAlreadyExists(Submit(Header(a, ta, 5), Model(9, 9))));
  std::string c = Join("c");
  EXPECT_FALSE(c.empty());
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::WAIT);
  // Both selected boards are in: the close starts and waits for a's add.
  absl::Notification closed;
  std::thread driver([&] {
    EXPECT_TRUE(coordinator_->RunOnce());
    closed.Notify();
  });
  EXPECT_FALSE(closed.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  blocking.release.Notify();
  push.join();
  driver.join();
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
}

TEST_F(RoundCoordinatorTest, ABoardThatRejoinsDuringItsAddStaysCounted) {
  auto strategy = std::make_unique<SecondAddBlocks>(Model(0, 0));
  SecondAddBlocks& blocking = *strategy;
  strategy_ = std::move(strategy);
  Make(3);
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b), tc = Task(c);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  std::thread push(
      [&] { EXPECT_TRUE(Submit(Header(a, ta, 5), Model(6, 6)).ok()); });
  blocking.entered.WaitForNotification();
  std::string a2 = Join("a");  // a restarts while its update is added
  blocking.release.Notify();
  push.join();
  EXPECT_EQ(Task(a2).action(), v1::GetTaskResponse::WAIT);  // it reported
  EXPECT_FALSE(coordinator_->RunOnce());                    // c is out
  ASSERT_TRUE(Submit(Header(c, tc, 5), Model(9, 9)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 3);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(6, 6)));
}

TEST_F(RoundCoordinatorTest, NamesMustBeShortPrintableText) {
  Make(2);
  for (const std::string& name :
       {std::string("evil\n[info] forged line"), std::string("\x1b[31mred"),
        std::string(1 << 20, 'x'), std::string()}) {
    v1::JoinRequest r;
    r.set_client_name(name);
    auto joined = coordinator_->Join(r);
    EXPECT_EQ(joined.status().code(), absl::StatusCode::kInvalidArgument);
    // The refusal quotes at most a short, escaped part of the name.
    EXPECT_LT(joined.status().message().size(), 400u);
    EXPECT_EQ(joined.status().message().find('\n'), std::string::npos);
    EXPECT_EQ(joined.status().message().find('\x1b'), std::string::npos);
  }
  EXPECT_EQ(coordinator_->registered_clients(), 0);
  v1::JoinRequest greedy;
  greedy.set_client_name("greedy");
  greedy.set_num_samples(uint64_t{1} << 62);
  EXPECT_EQ(coordinator_->Join(greedy).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RoundCoordinatorTest, BoardsThatNeverPollAreNotSelectedAndForgotten) {
  Make(2);
  for (int i = 0; i < 50; ++i) {
    v1::JoinRequest r;
    r.set_client_name(absl::StrCat("ghost-", i));
    ASSERT_TRUE(coordinator_->Join(r).ok());
  }
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(reports_.back().selected, 2);
  EXPECT_EQ(coordinator_->registered_clients(), 52);
  clock_.Advance(absl::Minutes(3));  // past the liveness window
  Task(a);
  Task(b);
  ASSERT_TRUE(coordinator_->RunOnce());  // opens round 2, forgets the ghosts
  EXPECT_EQ(coordinator_->registered_clients(), 2);
}

TEST_F(RoundCoordinatorTest, TheRegistryIsBounded) {
  max_clients_ = 2;
  Make(2);
  Join("a");
  Join("b");
  v1::JoinRequest r;
  r.set_client_name("c");
  EXPECT_EQ(coordinator_->Join(r).status().code(),
            absl::StatusCode::kResourceExhausted);
  r.set_client_name("a");  // a known board restarting is always let in
  EXPECT_TRUE(coordinator_->Join(r).ok());
  EXPECT_EQ(coordinator_->registered_clients(), 2);
}

TEST_F(RoundCoordinatorTest,
       CheckpointRecordsRoundTripFiguresThatAreNotFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  FederationSnapshot snapshot;
  snapshot.next_round = 2;
  snapshot.global = std::make_shared<const NamedTensors>(Model(1, 2));
  snapshot.clients.push_back({"c0001-abc", "a", 10, false, 0, 0, ""});
  RoundReport r;
  r.round = 1;
  r.round_seconds = 1e308;
  r.aggregation_seconds = std::nan("");
  r.eval = runtime::EvalResult{10, inf, -inf};
  r.refused_result = "its evaluation is not finite";
  r.eval_overlapped = true;
  r.paused_stragglers = 2;
  r.released_stragglers = 1;
  r.planner = "greedy";
  r.makespan_seconds = 3.5;
  r.elapsed_seconds = 1234.5;
  r.declined = 3;
  r.moved_samples = 40;
  ClientRoundReport c;
  c.client_id = "c0001-abc";
  c.client_name = "a";
  c.num_samples = std::numeric_limits<uint64_t>::max();
  c.metrics.set_train_loss(std::nan(""));
  c.metrics.set_train_accuracy(-inf);
  c.metrics.set_train_seconds(5e-324);
  c.resources.set_cpu_utilization(std::nan(""));
  r.clients.push_back(c);
  snapshot.history.push_back(r);
  snapshot.capacities["a"].seconds_per_sample = {inf, std::nan(""), 0.5};

  checkpoint::LoadedCheckpoint loaded = AsLoaded(snapshot);
  auto decoded = DecodeFederationCheckpoint(loaded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const RoundReport& back = decoded->snapshot.history.at(0);
  EXPECT_EQ(back.round_seconds, 1e308);
  EXPECT_TRUE(std::isnan(back.aggregation_seconds));
  ASSERT_TRUE(back.eval.has_value());
  EXPECT_EQ(back.eval->mean_loss, inf);
  EXPECT_EQ(back.eval->accuracy, -inf);
  EXPECT_EQ(back.refused_result, r.refused_result);
  EXPECT_TRUE(back.eval_overlapped);
  EXPECT_EQ(back.paused_stragglers, 2);
  EXPECT_EQ(back.released_stragglers, 1);
  EXPECT_EQ(back.planner, "greedy");
  EXPECT_EQ(back.makespan_seconds, 3.5);
  EXPECT_EQ(back.elapsed_seconds, 1234.5);
  EXPECT_EQ(back.declined, 3);
  EXPECT_EQ(back.moved_samples, 40u);
  const ClientRoundReport& cb = back.clients.at(0);
  EXPECT_EQ(cb.num_samples, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(std::isnan(cb.metrics.train_loss()));
  EXPECT_EQ(cb.metrics.train_accuracy(), -inf);
  EXPECT_EQ(cb.metrics.train_seconds(), 5e-324);
  EXPECT_TRUE(std::isnan(cb.resources.cpu_utilization()));
  const auto& sps = decoded->snapshot.capacities.at("a").seconds_per_sample;
  ASSERT_EQ(sps.size(), 3u);
  EXPECT_EQ(sps[0], inf);
  EXPECT_TRUE(std::isnan(sps[1]));
  EXPECT_EQ(sps[2], 0.5);

  // Records written before this fix hold null where a NaN was: they read.
  std::string state = loaded.files["state.json"];
  for (std::string_view token : {"\"NaN\"", "\"Infinity\"", "\"-Infinity\""}) {
    for (size_t p = state.find(token); p != std::string::npos;
         p = state.find(token)) {
      state.replace(p, token.size(), "null");
    }
  }
  loaded.files["state.json"] = state;
  auto old = DecodeFederationCheckpoint(loaded);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(
      std::isnan(old->snapshot.history[0].clients[0].metrics.train_loss()));
}

TEST_F(RoundCoordinatorTest, AJobResumesOnlyUnderTheSamePlan) {
  FederationSnapshot snapshot;
  snapshot.next_round = 3;
  snapshot.global = std::make_shared<NamedTensors>(Model(1, 2));
  const v1::TrainingPlan plan = TestPlan();
  auto decoded = DecodeFederationCheckpoint(AsLoaded(snapshot, plan));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(decoded->plan.has_value());
  EXPECT_TRUE(CheckSamePlan(*decoded, plan).ok());

  // Another learning rate and optimizer: refused, naming both fields.
  v1::TrainingPlan other = plan;
  other.set_learning_rate(0.01);
  other.set_optimizer("adam");
  absl::Status refused = CheckSamePlan(*decoded, other);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  for (const char* field :
       {"learning_rate", "optimizer", "ckpt-00000001", "--noresume"}) {
    EXPECT_NE(refused.message().find(field), absl::string_view::npos)
        << refused.message() << " does not name " << field;
  }
  // Another normalisation is another plan too.
  other = plan;
  other.set_input_std(0, 0.5f);
  EXPECT_FALSE(CheckSamePlan(*decoded, other).ok());

  // A checkpoint written before plans were kept resumes by model alone.
  decoded->plan.reset();
  EXPECT_TRUE(CheckSamePlan(*decoded, other).ok());
  other.set_model_name("resnet8");
  refused = CheckSamePlan(*decoded, other);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("resnet8"), absl::string_view::npos)
      << refused.message();
}

TEST_F(RoundCoordinatorTest, TheStrategysStateTravelsWithTheCheckpoint) {
  FederationSnapshot snapshot;
  snapshot.global = std::make_shared<NamedTensors>(Model(1, 2));
  snapshot.strategy_state = {{"m/w", at::full({2, 2}, 0.25f)},
                             {"v/w", at::full({2, 2}, 1e-6f)}};
  auto decoded = DecodeFederationCheckpoint(AsLoaded(snapshot));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const NamedTensors& state = decoded->snapshot.strategy_state;
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[1].name, "v/w");
  EXPECT_TRUE(state[1].tensor.equal(snapshot.strategy_state[1].tensor));
  // Without its strategy file the checkpoint is refused, not half-read.
  checkpoint::LoadedCheckpoint loaded = AsLoaded(snapshot);
  loaded.files.erase("strategy.pt");
  EXPECT_EQ(DecodeFederationCheckpoint(loaded).status().code(),
            absl::StatusCode::kDataLoss);
  // A stateless job writes no strategy file.
  snapshot.strategy_state.clear();
  EXPECT_EQ(AsLoaded(snapshot).files.count("strategy.pt"), 0u);
}

TEST_F(RoundCoordinatorTest,
       OverSelectedRoundsCloseOnTheirTargetAndCountLateOnes) {
  target_updates_ = 2;
  over_select_ = 1.5;  // 3 boards for 2 updates
  Make(1, /*rounds=*/2);
  std::vector<std::string> ids = {Join("a"), Join("b"), Join("c"), Join("d")};
  ASSERT_TRUE(coordinator_->RunOnce());
  std::vector<std::string> selected;
  v1::GetTaskResponse task;
  for (const auto& id : ids) {
    v1::GetTaskResponse t = Task(id);
    if (t.action() == v1::GetTaskResponse::TRAIN) {
      selected.push_back(id);
      task = t;
    }
  }
  ASSERT_EQ(selected.size(), 3u);
  ASSERT_TRUE(Submit(Header(selected[0], task, 1), Model(1, 1)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());  // 1 of the 2 it needs
  ASSERT_TRUE(Submit(Header(selected[1], task, 1), Model(3, 3)).ok());
  EXPECT_TRUE(coordinator_->RunOnce());  // closes without the third
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_EQ(reports_[0].cut_off, 1);
  // The third board's work arrives late: refused, said so, and counted.
  absl::Status late = Submit(Header(selected[2], task, 1), Model(9, 9));
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  EXPECT_EQ(wire::ReasonOf(late), wire::kReasonLateUpdate) << late;
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  ASSERT_TRUE(coordinator_->RunOnce());  // round 2
  std::vector<std::string> second;
  for (const auto& id : ids) {
    v1::GetTaskResponse t = Task(id);
    if (t.action() == v1::GetTaskResponse::TRAIN) {
      second.push_back(id);
      task = t;
    }
  }
  ASSERT_GE(second.size(), 2u);
  ASSERT_TRUE(Submit(Header(second[0], task, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Submit(Header(second[1], task, 1), Model(2, 2)).ok());
  EXPECT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1].late_updates, 1);
}

TEST_F(RoundCoordinatorTest, ShutdownEndsLongPolls) {
  Make(2);
  std::string a = Join("a");
  coordinator_->Shutdown();
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  EXPECT_TRUE(coordinator_->done());
}

}  // namespace
}  // namespace fedberry::server::round_coordinator_test

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
