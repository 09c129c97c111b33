#include "client/testing/update_attack.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "client/plan_trainer.h"

namespace fedberry::client::update_attack_test {
namespace {

TEST(UpdateAttack, ParsesScaleAndSignFlip) {
  auto none = ParseUpdateAttack("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  auto scale = ParseUpdateAttack("scale:10");
  ASSERT_TRUE(scale.ok()) << scale.status();
  EXPECT_EQ((*scale)->factor, 10);

  auto flip = ParseUpdateAttack("signflip");
  ASSERT_TRUE(flip.ok()) << flip.status();
  EXPECT_EQ((*flip)->factor, -1);

  auto flip4 = ParseUpdateAttack("signflip:4");
  ASSERT_TRUE(flip4.ok()) << flip4.status();
  EXPECT_EQ((*flip4)->factor, -4);
  EXPECT_EQ((*flip4)->spec, "signflip:4");
}

TEST(UpdateAttack, RefusesMalformedSpecsNamingThem) {
  for (const char* bad : {"scale", "scale:", "scale:0", "scale:x", "scale:inf",
                          "signflip:", "signflipx", "flip:2", "scale:nan"}) {
    auto a = ParseUpdateAttack(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find(bad), std::string::npos) << a.status();
  }
}

TEST(UpdateAttack, ScalesTheUpdateNotTheModelAndLeavesTheTrainerAlone) {
  const runtime::NamedTensors global = {{"w", at::tensor({1.0f, 2.0f, 3.0f})},
                                        {"steps", at::tensor({7}, at::kLong)}};
  at::Tensor trained = at::tensor({2.0f, 2.0f, 1.0f});
  runtime::NamedTensors model = {{"w", trained},
                                 {"steps", at::tensor({9}, at::kLong)}};

  ASSERT_TRUE(ApplyUpdateAttack({-3, "signflip:3"}, global, &model).ok());
  // global + (-3) * ([2,2,1] - [1,2,3]) = [1,2,3] + [-3,0,6]
  EXPECT_TRUE(at::equal(model[0].tensor, at::tensor({-2.0f, 2.0f, 9.0f})))
      << model[0].tensor;
  EXPECT_EQ(model[1].tensor.item<int64_t>(), 9);  // integer tensors kept
  EXPECT_TRUE(at::equal(trained, at::tensor({2.0f, 2.0f, 1.0f})));
}

TEST(UpdateAttack, RefusesAnotherLayout) {
  const runtime::NamedTensors global = {{"w", at::zeros({3})}};
  runtime::NamedTensors shorter;
  EXPECT_FALSE(ApplyUpdateAttack({10, "scale:10"}, global, &shorter).ok());
  runtime::NamedTensors other_shape = {{"w", at::zeros({2})}};
  auto s = ApplyUpdateAttack({10, "scale:10"}, global, &other_shape);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s;
}

// An inner trainer that "trains" to fixed tensors, encoded as the plan says.
class FixedTrainer : public LocalTrainer {
 public:
  explicit FixedTrainer(runtime::NamedTensors trained)
      : trained_(std::move(trained)) {}
  absl::Status UsePlan(const v1::TrainingPlan& plan,
                       const runtime::VerifiedModelFile*) override {
    plan_ = plan;
    return absl::OkStatus();
  }
  uint64_t num_samples() const override { return 5; }
  absl::StatusOr<TrainOutcome> Train(const TaskRef&, const v1::TrainConfig&,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>&) override {
    TrainOutcome out;
    for (const auto& t : trained_) out.model.push_back({t.name, t.tensor});
    out.num_samples = 5;
    auto sent_global = SelectLike(global, out.model);
    if (!sent_global.ok()) return sent_global.status();
    runtime::NamedTensors next;
    auto encoded = EncodeUpdate(plan_, out.model, *sent_global, {}, &next);
    if (!encoded.ok()) return encoded.status();
    out.encoded = *std::move(encoded);
    return out;
  }

 private:
  runtime::NamedTensors trained_;
  v1::TrainingPlan plan_;
};

TEST(AttackingTrainer, PoisonsWhatTheInnerTrainerSendsAndForwardsTheRest) {
  const runtime::NamedTensors global = {{"w", at::tensor({1.0f, 2.0f, 3.0f})}};
  FixedTrainer inner({{"w", at::tensor({2.0f, 2.0f, 1.0f})}});
  AttackingTrainer attacking(inner, {10, "scale:10"});
  EXPECT_EQ(attacking.num_samples(), 5u);
  std::atomic<bool> stop{false};
  auto out = attacking.Train({}, {}, global, stop);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->encoded.empty());  // RAW: the model is the update
  // [1,2,3] + 10 * ([2,2,1] - [1,2,3])
  EXPECT_TRUE(
      at::equal(out->model[0].tensor, at::tensor({11.0f, 2.0f, -17.0f})))
      << out->model[0].tensor;
  EXPECT_EQ(out->num_samples, 5u);
}

TEST(AttackingTrainer, EncodesThePoisonedUpdateAsThePlanSays) {
  // A plan that freezes "frozen": the update carries "w" only.
  const runtime::NamedTensors global = {{"frozen", at::tensor({4.0f})},
                                        {"w", at::tensor({1.0f, 2.0f, 3.0f})}};
  const runtime::NamedTensors trained = {{"w", at::tensor({2.0f, 2.0f, 1.0f})}};
  FixedTrainer inner(trained);
  AttackingTrainer attacking(inner, {-2, "signflip:2"});
  v1::TrainingPlan plan;
  plan.set_update_encoding(v1::ENCODING_INT8);
  ASSERT_TRUE(attacking.UsePlan(plan, nullptr).ok());
  std::atomic<bool> stop{false};
  auto out = attacking.Train({}, {}, global, stop);
  ASSERT_TRUE(out.ok()) << out.status();

  runtime::NamedTensors poisoned = {{"w", at::tensor({-1.0f, 2.0f, 7.0f})}};
  runtime::NamedTensors next;
  auto want = EncodeUpdate(plan, poisoned, {global[1]}, {}, &next);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(out->encoded.size(), 1u);
  EXPECT_EQ(out->encoded[0].spec.SerializeAsString(),
            (*want)[0].spec.SerializeAsString());
  EXPECT_EQ(out->encoded[0].payload(), (*want)[0].payload());
  EXPECT_TRUE(at::equal(out->model[0].tensor, poisoned[0].tensor));
}

TEST(AttackingTrainer, RefusesAnUpdateOfATensorTheGlobalModelLacks) {
  FixedTrainer inner({{"v", at::zeros({2})}});
  AttackingTrainer attacking(inner, {10, "scale:10"});
  std::atomic<bool> stop{false};
  auto out = attacking.Train({}, {}, {{"w", at::zeros({2})}}, stop);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("'v'"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace fedberry::client::update_attack_test
