// The small, seeded local training job that the exactness tests (resume,
// watchdog pauses) run: LeNet-5, 24 steps of 8 tiny images, fixed seeds.
#ifndef FEDBERRY_TESTS_CLIENT_SMALL_TRAINING_JOB_H_
#define FEDBERRY_TESTS_CLIENT_SMALL_TRAINING_JOB_H_

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "client/plan_trainer.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/image_dataset.h"
#include "runtime/model.h"
#include "runtime/model_zoo.h"
#include "tests/test_files.h"

namespace fedberry::client::small_job {

inline v1::TrainConfig Config() {
  v1::TrainConfig c;
  c.set_model("lenet5");
  c.set_local_steps(24);
  c.set_batch_size(8);
  c.set_learning_rate(0.05);
  c.set_momentum(0.9);
  c.set_seed(11);
  return c;
}

inline runtime::ImageDataset Data(const std::string& dir) {
  fedberry::testing::WriteTinyDataset(dir, 80);
  auto d = runtime::LoadIdxDataset(dir, runtime::Split::kTrain);
  EXPECT_TRUE(d.ok()) << d.status();
  return *d;
}

inline runtime::NamedTensors Global() {
  at::manual_seed(2);
  return (*runtime::MakeImageModel("lenet5"))->State();
}

inline void ExpectBitEqual(const runtime::NamedTensors& a,
                           const runtime::NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].tensor.equal(b[i].tensor)) << a[i].name;
  }
}

// The job trained once without interruption (one thread): what every
// paused, released or resumed run must match, bit for bit.
inline absl::StatusOr<TrainOutcome> Uninterrupted(
    const runtime::ImageDataset& data, const TaskRef& task) {
  at::set_num_threads(1);
  std::atomic<bool> stop{false};
  PlanTrainer plain(data, 1);
  return plain.Train(task, Config(), Global(), stop);
}

}  // namespace fedberry::client::small_job

#endif  // FEDBERRY_TESTS_CLIENT_SMALL_TRAINING_JOB_H_
