// The round coordinator's test fixture: a coordinator over a simulated
// clock and a small model, with helpers to join boards, ask for tasks and
// push updates; shared by tests/server/round_coordinator_*_test.cc.
#ifndef FEDBERRY_TESTS_SERVER_TESTING_ROUND_COORDINATOR_FIXTURE_H_
#define FEDBERRY_TESTS_SERVER_TESTING_ROUND_COORDINATOR_FIXTURE_H_

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
#include "server/round_coordinator.h"

namespace fedberry::server::round_coordinator_test {

using runtime::NamedTensors;

inline NamedTensors Model(float w, float b) {
  return {{"w", at::full({2, 2}, w)}, {"b", at::full({2}, b)}};
}

inline v1::TrainingPlan TestPlan() {
  v1::TrainConfig config;
  config.set_model("lenet5");
  config.set_learning_rate(0.05);
  config.set_momentum(0.9);
  return runtime::DefaultImagePlan(config);
}

// The federation checkpoint of `snapshot` as the store would load it.
inline checkpoint::LoadedCheckpoint AsLoaded(
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

inline bool SameModel(const NamedTensors& a, const NamedTensors& b) {
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
    o.secagg = secagg_;
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
  std::optional<SecAggOptions> secagg_;               // plain updates
};

inline v1::BoardCondition Declining(const std::string& why) {
  v1::BoardCondition c;
  c.set_declined(why);
  c.set_soc_celsius(71.5);
  return c;
}

inline std::optional<BoardRow> RowOf(const std::vector<BoardRow>& rows,
                                     const std::string& name) {
  for (const BoardRow& r : rows) {
    if (r.name == name) return r;
  }
  return std::nullopt;
}

// The parent's round 7 as a site gateway receives it.
inline UpstreamRound ParentRound(NamedTensors global) {
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

inline v1::UpdateHeader WithSpeed(v1::UpdateHeader h,
                                  double samples_per_second) {
  h.mutable_resources()->set_samples_per_second(samples_per_second);
  return h;
}

}  // namespace fedberry::server::round_coordinator_test

#endif  // FEDBERRY_TESTS_SERVER_TESTING_ROUND_COORDINATOR_FIXTURE_H_
