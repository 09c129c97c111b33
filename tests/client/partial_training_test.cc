// Training part of a model on the board (--trainable): frozen parameters
// stay bit-identical and get no gradient or optimizer state, updates carry
// the trainable tensors only in every encoding, and a plan naming a tensor
// the model lacks is refused. (Resume: training_resume_test.cc.)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "absl/strings/match.h"
#include "client/plan_trainer.h"
#include "runtime/model_zoo.h"
#include "runtime/tensor_codec.h"
#include "runtime/testing/vector_dataset.h"
#include "runtime/trainable_set.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"
#include "tests/client/small_training_job.h"
#include "tests/test_files.h"

namespace fedberry::client::partial_training_test {
namespace {

using small_job::Config;
using small_job::Data;
using small_job::Global;

v1::TrainingPlan HeadPlan() {
  v1::TrainingPlan plan = runtime::DefaultImagePlan(Config());
  plan.add_trainable_tensors("fc3.weight");
  plan.add_trainable_tensors("fc3.bias");
  return plan;
}

TEST(PartialTraining, FrozenParametersStayAndHaveNoGradientOrOptimizerState) {
  at::set_num_threads(1);
  at::manual_seed(4);
  std::unique_ptr<runtime::Model> model = *runtime::MakeZooModel("mlp", {8}, 3);
  const runtime::NamedTensors before = model->State();
  const size_t parameters = model->Parameters().size();
  ASSERT_GE(parameters, 4u);
  runtime::TrainOptions options;
  options.batch_size = 8;
  options.local_steps = 12;
  options.trainable.assign(parameters, false);
  options.trainable[parameters - 1] = true;  // the last layer's bias
  options.trainable[parameters - 2] = true;  // and weight
  v1::TrainingPlan plan = runtime::DefaultImagePlan(Config());
  plan.clear_input_shape();
  plan.add_input_shape(8);
  plan.set_num_outputs(3);
  auto objective = runtime::ObjectiveOf(plan, *model);
  ASSERT_TRUE(objective.ok()) << objective.status();
  const auto data = runtime::testing::Blobs(64, 8, 3);
  size_t optimized = 0, with_state = 0;
  runtime::TrainHooks hooks;
  hooks.after_batch = [&](const runtime::TrainCursor&, runtime::Model& m,
                          torch::optim::Optimizer& o) {
    optimized = 0;
    for (const auto& group : o.param_groups())
      optimized += group.params().size();
    with_state = o.state().size();
    std::vector<torch::Tensor> p = m.Parameters();
    for (size_t i = 0; i + 2 < p.size(); ++i) {
      EXPECT_FALSE(p[i].grad().defined()) << "parameter " << i;
    }
    return absl::OkStatus();
  };
  auto trained = runtime::Train(*model, data, *objective, options, hooks);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ(optimized, 2u);
  EXPECT_EQ(with_state, 2u);  // SGD momentum of the two trained only
  const runtime::NamedTensors after = model->State();
  for (size_t i = 0; i < parameters; ++i) {
    EXPECT_EQ(after[i].tensor.equal(before[i].tensor), i + 2 < parameters)
        << after[i].name;
  }
}

TEST(PartialTraining, ABoardRefusesAPlanNamingATensorItsModelLacks) {
  fedberry::testing::TempDir dir;
  PlanTrainer trainer(Data(dir / "data"), 1);
  v1::TrainingPlan plan = HeadPlan();
  plan.add_trainable_tensors("head.weight");
  absl::Status s = trainer.UsePlan(plan, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'head.weight'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "fc3.bias")) << s;
}

// The update as the server reads it: through the stream's expected specs,
// completed with the global model's frozen tensors.
runtime::NamedTensors AsTheServerReadsIt(const TrainOutcome& out,
                                         const v1::TrainingPlan& plan,
                                         const runtime::NamedTensors& global,
                                         const runtime::TrainableSet& set) {
  auto specs = runtime::SpecsOf(global);
  EXPECT_TRUE(specs.ok());
  runtime::ModelAssembler assembler(
      1, "t",
      runtime::UpdateSpecs(set.Select(*specs), plan.update_encoding(),
                           plan.topk_fraction()),
      std::make_shared<const runtime::NamedTensors>(set.Select(global)));
  const auto sink = [&](const v1::ModelChunk& c) {
    EXPECT_TRUE(assembler.Add(c).ok());
    return true;
  };
  EXPECT_TRUE((out.encoded.empty()
                   ? runtime::EncodeModel(out.model, 1, "t", sink)
                   : runtime::EncodeTensors(out.encoded, 1, "t", sink))
                  .ok());
  auto partial = assembler.Finish();
  EXPECT_TRUE(partial.ok()) << partial.status();
  auto whole = set.Complete(*partial, global);
  EXPECT_TRUE(whole.ok()) << whole.status();
  return *whole;
}

TEST(PartialTraining, UpdatesCarryOnlyTrainableTensorsInEveryEncoding) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  const runtime::NamedTensors global = Global();
  std::atomic<bool> stop{false};
  for (v1::Encoding e : {v1::ENCODING_RAW, v1::ENCODING_FP16, v1::ENCODING_INT8,
                         v1::ENCODING_TOPK}) {
    SCOPED_TRACE(v1::Encoding_Name(e));
    v1::TrainingPlan plan = HeadPlan();
    plan.set_update_encoding(e);
    if (e == v1::ENCODING_TOPK) plan.set_topk_fraction(0.5);
    PlanTrainer trainer(data, 1);
    ASSERT_TRUE(trainer.UsePlan(plan, nullptr).ok());
    auto out = trainer.Train({1, "t"}, Config(), global, stop);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->model.size(), 2u);
    EXPECT_EQ(out->model[0].name, "fc3.weight");
    EXPECT_EQ(out->model[1].name, "fc3.bias");
    if (e != v1::ENCODING_RAW) {
      ASSERT_EQ(out->encoded.size(), 2u);
    }
    auto lenet = *runtime::MakeImageModel("lenet5");
    auto set = runtime::TrainableSet::OfPlan(plan, *lenet);
    ASSERT_TRUE(set.ok());
    const runtime::NamedTensors whole =
        AsTheServerReadsIt(*out, plan, global, *set);
    ASSERT_EQ(whole.size(), global.size());
    for (size_t i = 0; i + 2 < whole.size(); ++i) {
      EXPECT_TRUE(whole[i].tensor.equal(global[i].tensor)) << whole[i].name;
    }
    EXPECT_FALSE(whole.back().tensor.equal(global.back().tensor));
    if (e == v1::ENCODING_RAW || e == v1::ENCODING_FP16) {
      EXPECT_TRUE(
          whole.back().tensor.allclose(out->model.back().tensor, 1e-3, 1e-3));
    }
  }
}

}  // namespace
}  // namespace fedberry::client::partial_training_test
