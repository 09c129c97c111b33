// Exactness of resume: a local training run continued from a mid-run
// checkpoint ends with the same model, bit for bit, as the run that was
// never interrupted (one thread, fixed seed).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "client/plan_trainer.h"
#include "runtime/training_plan.h"
#include "tests/client/small_training_job.h"
#include "tests/test_files.h"

namespace fedberry::client::training_resume_test {
namespace {

namespace fs = std::filesystem;

using small_job::Config;
using small_job::Data;
using small_job::ExpectBitEqual;
using small_job::Global;

// Trains `task` under `plan` with a checkpoint every 5 batches into `root`,
// then keeps only the checkpoint `keep` (e.g. "ckpt-00000002", the one at
// batch 10), as if the process had been killed right after writing it.
void TrainAndKeepOnly(const runtime::ImageDataset& data,
                      const v1::TrainingPlan& plan, const TaskRef& task,
                      const std::string& root, const std::string& keep) {
  std::atomic<bool> stop{false};
  {
    PlanTrainer saving(data, 1,
                       std::make_unique<checkpoint::CheckpointStore>(
                           root, base::FileSystem::Default(),
                           checkpoint::StoreOptions{.keep = 100}),
                       CheckpointPolicy{5, absl::ZeroDuration()});
    ASSERT_TRUE(saving.UsePlan(plan, nullptr).ok());
    ASSERT_TRUE(saving.Train(task, Config(), Global(), stop).ok());
  }
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.path().filename() != keep) fs::remove_all(e.path());
  }
}

TEST(TrainingResume, ResumeFromEveryMidRunCheckpointIsBitExact) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  const TaskRef task{3, "r3-abc"};
  std::atomic<bool> stop{false};

  auto reference = small_job::Uninterrupted(data, task);
  ASSERT_TRUE(reference.ok()) << reference.status();

  // A run that checkpoints every 5 batches (and at the end).
  const std::string root = dir / "ckpt";
  PlanTrainer saving(data, 1,
                     std::make_unique<checkpoint::CheckpointStore>(
                         root, base::FileSystem::Default(),
                         checkpoint::StoreOptions{.keep = 100}),
                     CheckpointPolicy{5, absl::ZeroDuration()});
  auto saved_run = saving.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(saved_run.ok());
  ExpectBitEqual(reference->model, saved_run->model);
  EXPECT_EQ(saving.checkpoints_written(), 5);  // 5, 10, 15, 20, end

  // Resume from each mid-run checkpoint alone, as if killed right after it.
  for (int k = 1; k <= 4; ++k) {
    const std::string only = dir / ("only-" + std::to_string(k));
    fs::create_directories(only);
    char name[32];
    std::snprintf(name, sizeof(name), "ckpt-%08d", k);
    fs::copy(root + "/" + name, only + "/" + name);
    PlanTrainer resumed(data, 1,
                        std::make_unique<checkpoint::CheckpointStore>(only),
                        CheckpointPolicy{5, absl::ZeroDuration()});
    // A different global proves the state came from the checkpoint.
    at::manual_seed(99);
    auto other = (*runtime::MakeImageModel("lenet5"))->State();
    auto out = resumed.Train(task, Config(), other, stop);
    ASSERT_TRUE(out.ok()) << out.status();
    SCOPED_TRACE(name);
    ExpectBitEqual(reference->model, out->model);
    EXPECT_EQ(out->num_samples, reference->num_samples);
    EXPECT_DOUBLE_EQ(out->metrics.train_loss(),
                     reference->metrics.train_loss());
  }
}

TEST(TrainingResume, CheckpointOfAClosedRoundIsDropped) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  std::atomic<bool> stop{false};
  const std::string root = dir / "ckpt";
  {
    PlanTrainer saving(data, 1,
                       std::make_unique<checkpoint::CheckpointStore>(root),
                       CheckpointPolicy{5, absl::ZeroDuration()});
    ASSERT_TRUE(saving.Train({1, "r1-old"}, Config(), Global(), stop).ok());
  }
  auto reference = small_job::Uninterrupted(data, {2, "r2-new"});
  PlanTrainer resumed(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(root));
  auto out = resumed.Train({2, "r2-new"}, Config(), Global(), stop);
  ASSERT_TRUE(out.ok() && reference.ok());
  // Trained from the given global model, not from round 1's state.
  ExpectBitEqual(reference->model, out->model);
}

TEST(TrainingResume, CheckpointUnderAnotherPlanIsDropped) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  std::atomic<bool> stop{false};
  const TaskRef task{3, "r3-abc"};
  const v1::TrainingPlan sgd = runtime::DefaultImagePlan(Config());
  v1::TrainingPlan adam = sgd;  // same model, task and data; other optimizer
  adam.set_optimizer("adam");
  adam.set_learning_rate(0.001);
  const std::string root = dir / "ckpt";
  TrainAndKeepOnly(data, sgd, task, root, "ckpt-00000002");  // batch 10
  PlanTrainer plain(data, 1);
  ASSERT_TRUE(plain.UsePlan(adam, nullptr).ok());
  auto reference = plain.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(reference.ok()) << reference.status();

  PlanTrainer resumed(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(root));
  ASSERT_TRUE(resumed.UsePlan(adam, nullptr).ok());
  auto out = resumed.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(out.ok()) << out.status();
  // The whole round under Adam from the global model: the SGD run's
  // momentum and weights at batch 10 were not taken.
  ExpectBitEqual(reference->model, out->model);
  EXPECT_EQ(out->metrics.steps(), 24u);
}

// Training part of the model (--trainable): the checkpoint's optimizer
// state covers the two trained tensors only, and resuming it is exact.
TEST(TrainingResume, PartialTrainingResumesExactly) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  std::atomic<bool> stop{false};
  const TaskRef task{2, "r2-abc"};
  v1::TrainingPlan plan = runtime::DefaultImagePlan(Config());
  plan.add_trainable_tensors("fc3.weight");
  plan.add_trainable_tensors("fc3.bias");
  PlanTrainer plain(data, 1);
  ASSERT_TRUE(plain.UsePlan(plan, nullptr).ok());
  auto reference = plain.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_EQ(reference->model.size(), 2u);  // what travels: fc3 only

  const std::string root = dir / "ckpt";
  TrainAndKeepOnly(data, plan, task, root, "ckpt-00000002");  // batch 10
  PlanTrainer resumed(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(root));
  ASSERT_TRUE(resumed.UsePlan(plan, nullptr).ok());
  at::manual_seed(99);  // another global: the state comes from the file
  auto other = (*runtime::MakeImageModel("lenet5"))->State();
  auto out = resumed.Train(task, Config(), other, stop);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual(reference->model, out->model);
}

// The payload bytes of an encoded update, tensor by tensor.
std::vector<std::string> Payloads(const TrainOutcome& o) {
  std::vector<std::string> out;
  for (const auto& e : o.encoded) out.emplace_back(e.payload());
  return out;
}

TEST(TrainingResume, TopKLeftoversSurviveARestartExactly) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  std::atomic<bool> stop{false};
  v1::TrainingPlan plan = runtime::DefaultImagePlan(Config());
  plan.set_update_encoding(v1::ENCODING_TOPK);
  plan.set_topk_fraction(0.05);
  const TaskRef first{1, "r1-a"}, second{2, "r2-b"};

  // Uninterrupted: two rounds in one process.
  PlanTrainer plain(data, 1);
  ASSERT_TRUE(plain.UsePlan(plan, nullptr).ok());
  auto r1 = plain.Train(first, Config(), Global(), stop);
  ASSERT_TRUE(r1.ok()) << r1.status();
  ASSERT_FALSE(r1->encoded.empty());
  EXPECT_EQ(r1->encoded[0].spec.encoding(), v1::ENCODING_TOPK);
  EXPECT_TRUE(r1->encoded[0].spec.delta());
  // Trained again (its round reopened after a server restart): the same
  // update, from the same leftovers.
  auto again = plain.Train(first, Config(), Global(), stop);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Payloads(*again), Payloads(*r1));
  auto r2 = plain.Train(second, Config(), r1->model, stop);
  ASSERT_TRUE(r2.ok());

  // With a board restart after each round: the finished checkpoint carries
  // the leftovers.
  const std::string root = dir / "ckpt";
  auto make = [&] {
    auto t = std::make_unique<PlanTrainer>(
        data, 1, std::make_unique<checkpoint::CheckpointStore>(root),
        CheckpointPolicy{5, absl::ZeroDuration()});
    EXPECT_TRUE(t->UsePlan(plan, nullptr).ok());
    return t;
  };
  {
    auto t = make();
    auto out = t->Train(first, Config(), Global(), stop);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(Payloads(*out), Payloads(*r1));
  }
  {
    auto t = make();  // killed during the push: resumes the finished round
    auto out = t->Train(first, Config(), Global(), stop);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(Payloads(*out), Payloads(*r1));
  }
  auto t = make();  // restarted before round 2
  auto out = t->Train(second, Config(), r1->model, stop);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Payloads(*out), Payloads(*r2));
}

TEST(TrainingResume, FedProxPullsTowardsTheGlobalModelAndResumesExactly) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  std::atomic<bool> stop{false};
  const TaskRef task{3, "r3-abc"};
  auto distance = [](const runtime::NamedTensors& a,
                     const runtime::NamedTensors& b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].tensor.is_floating_point()) continue;
      d += (a[i].tensor - b[i].tensor).pow(2).sum().item<double>();
    }
    return std::sqrt(d);
  };
  v1::TrainingPlan plan = runtime::DefaultImagePlan(Config());
  PlanTrainer free(data, 1);
  ASSERT_TRUE(free.UsePlan(plan, nullptr).ok());
  auto unbound = free.Train(task, Config(), Global(), stop);
  plan.set_proximal_mu(5.0);
  PlanTrainer prox(data, 1);
  ASSERT_TRUE(prox.UsePlan(plan, nullptr).ok());
  auto bound = prox.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(unbound.ok() && bound.ok());
  // The proximal term keeps the board nearer the global model.
  EXPECT_LT(distance(bound->model, Global()),
            0.8 * distance(unbound->model, Global()));

  // Resumed from a mid-run checkpoint: bit for bit the same.
  const std::string root = dir / "ckpt";
  TrainAndKeepOnly(data, plan, task, root, "ckpt-00000003");  // batch 15
  PlanTrainer resumed(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(root));
  ASSERT_TRUE(resumed.UsePlan(plan, nullptr).ok());
  auto out = resumed.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual(bound->model, out->model);
}

TEST(TrainingResume, FinishedCheckpointSkipsTraining) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  std::atomic<bool> stop{false};
  const std::string root = dir / "ckpt";
  runtime::NamedTensors trained;
  {
    PlanTrainer saving(data, 1,
                       std::make_unique<checkpoint::CheckpointStore>(root),
                       CheckpointPolicy{0, absl::ZeroDuration()});
    auto out = saving.Train({4, "r4"}, Config(), Global(), stop);
    ASSERT_TRUE(out.ok());
    trained = out->model;
    EXPECT_EQ(saving.checkpoints_written(), 1);  // the end-of-training one
  }
  PlanTrainer resumed(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(root));
  std::atomic<bool> stopped{true};  // training a single batch would fail
  auto out = resumed.Train({4, "r4"}, Config(), Global(), stopped);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual(trained, out->model);
  EXPECT_EQ(out->metrics.steps(), 24u);
}

}  // namespace
}  // namespace fedberry::client::training_resume_test
