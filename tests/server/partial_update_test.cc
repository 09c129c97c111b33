// Jobs that train part of the model (--trainable): the coordinator expects
// updates of the trainable parameters and buffers only, refuses others with
// a clear message, and every strategy's next global model keeps the frozen
// tensors of the initial model bit for bit.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "base/testing/simulated_clock.h"
#include "runtime/trainable_set.h"
#include "server/round_coordinator.h"
#include "server/strategy/keep_frozen.h"

namespace fedberry::server::partial_update_test {
namespace {

using runtime::NamedTensors;
using runtime::TrainableSet;

// Two parameters (w, b), then a buffer (stat).
NamedTensors Initial() {
  at::manual_seed(5);
  return {{"w", at::randn({3, 4})},
          {"b", at::randn({4})},
          {"stat", at::randn({4})}};
}

TrainableSet TrainsB(const NamedTensors& model) {
  auto set = TrainableSet::Make(model, 2, {"b"});
  EXPECT_TRUE(set.ok()) << set.status();
  return *set;
}

// What a board training b sends: b and stat moved by `by`.
NamedTensors Partial(const NamedTensors& global, float by) {
  return {{"b", global[1].tensor + by}, {"stat", global[2].tensor * by}};
}

class PartialUpdateTest : public ::testing::Test {
 protected:
  void Make() {
    CoordinatorOptions o;
    o.rounds = 2;
    o.min_clients_per_round = 2;
    o.min_clients_to_start = 2;
    o.train.set_model("test");
    o.max_update_ratio = 0;
    o.strategy.parameter_count = 2;
    o.trainable_tensors = {"b"};
    coordinator_ =
        RoundCoordinator::Create(o, Initial(), nullptr, nullptr, clock_)
            .value();
  }

  // Boards a and b join and round 1 opens; returns their headers.
  std::vector<v1::UpdateHeader> OpenRound() {
    std::vector<v1::UpdateHeader> headers;
    for (const char* name : {"a", "b"}) {
      v1::JoinRequest r;
      r.set_client_name(name);
      r.set_num_samples(10);
      auto joined = coordinator_->Join(r);
      EXPECT_TRUE(joined.ok()) << joined.status();
      EXPECT_TRUE(
          coordinator_->GetTask(joined->client_id(), absl::ZeroDuration())
              .ok());
      v1::UpdateHeader h;
      h.set_client_id(joined->client_id());
      h.set_num_samples(5);
      headers.push_back(h);
    }
    EXPECT_TRUE(coordinator_->RunOnce());
    for (auto& h : headers) {
      auto task = coordinator_->GetTask(h.client_id(), absl::ZeroDuration());
      EXPECT_TRUE(task.ok()) << task.status();
      h.set_round(task->round());
      h.set_task_id(task->task_id());
    }
    return headers;
  }

  absl::Status Submit(const v1::UpdateHeader& h, const NamedTensors& m) {
    if (auto s = coordinator_->BeginUpdate(h); !s.ok()) return s.status();
    return coordinator_->SubmitUpdate(h, m).status();
  }

  SimulatedClock clock_;
  std::unique_ptr<RoundCoordinator> coordinator_;
};

TEST_F(PartialUpdateTest, TheStreamMustCarryTheTrainableTensorsOnly) {
  Make();
  auto headers = OpenRound();
  auto expected = coordinator_->BeginUpdate(headers[0]);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(expected->specs.size(), 2u);
  EXPECT_EQ(expected->specs[0].name(), "b");
  EXPECT_EQ(expected->specs[1].name(), "stat");
  // Differences are taken from the same tensors of the global model.
  ASSERT_EQ(expected->global->size(), 2u);
  EXPECT_EQ((*expected->global)[0].name, "b");
}

TEST_F(PartialUpdateTest, AnUpdateCarryingAFrozenTensorIsRefused) {
  Make();
  auto headers = OpenRound();
  const NamedTensors global = *coordinator_->global_model();
  NamedTensors whole = global;  // w travels too
  whole[1].tensor = whole[1].tensor + 1;
  absl::Status s = Submit(headers[0], whole);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'w', which the plan freezes"))
      << s;
  NamedTensors lacking = {{"stat", global[2].tensor}};
  s = Submit(headers[1], lacking);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "lacks 'b'")) << s;
}

TEST_F(PartialUpdateTest, TheNextModelKeepsFrozenTensorsAndAveragesTheRest) {
  Make();
  auto headers = OpenRound();
  const NamedTensors global = *coordinator_->global_model();
  ASSERT_TRUE(Submit(headers[0], Partial(global, 1)).ok());
  ASSERT_TRUE(Submit(headers[1], Partial(global, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  const NamedTensors next = *coordinator_->global_model();
  ASSERT_EQ(next.size(), 3u);
  EXPECT_TRUE(next[0].tensor.equal(Initial()[0].tensor));
  EXPECT_TRUE(next[1].tensor.allclose(global[1].tensor + 2));
  EXPECT_TRUE(next[2].tensor.allclose(global[2].tensor * 2));
}

// Each rule computes something for the frozen tensor (a float64 mean of
// equal values, a server optimizer step of zero, a median); the result is
// the initial tensor whatever it computed.
TEST(KeepFrozen, EveryKindOfStrategyKeepsFrozenTensorsExact) {
  const NamedTensors global = Initial();
  const TrainableSet set = TrainsB(global);
  for (const char* name : {"fedavg", "fedadam", "median", "krum"}) {
    SCOPED_TRACE(name);
    StrategyOptions o;
    o.name = name;
    o.parameter_count = 2;
    o.spill_dir = ::testing::TempDir();
    o.tau = 1e-3;
    auto rule = MakeStrategy(o, global);
    ASSERT_TRUE(rule.ok()) << rule.status();
    std::unique_ptr<Strategy> strategy = KeepFrozen(*std::move(rule), set);
    auto shared = std::make_shared<const NamedTensors>(global);
    auto round = strategy->BeginRound(shared);
    ASSERT_TRUE(round.ok()) << round.status();
    for (int i = 0; i < 5; ++i) {
      auto whole = set.Complete(Partial(global, 0.1f * (i + 1)), global);
      ASSERT_TRUE(whole.ok()) << whole.status();
      ASSERT_TRUE((*round)->Add(*whole, 3 + i).ok());
    }
    auto next = (*round)->Result();
    ASSERT_TRUE(next.ok()) << next.status();
    strategy->Commit(**round);
    EXPECT_TRUE((*next)[0].tensor.equal(global[0].tensor));
    EXPECT_FALSE((*next)[1].tensor.equal(global[1].tensor));
  }
}

TEST(KeepFrozen, AWholeModelStrategyIsLeftAsItIs) {
  auto rule = MakeStrategy(StrategyOptions{}, Initial());
  ASSERT_TRUE(rule.ok());
  Strategy* raw = rule->get();
  EXPECT_EQ(KeepFrozen(*std::move(rule), TrainableSet()).get(), raw);
}

}  // namespace
}  // namespace fedberry::server::partial_update_test
