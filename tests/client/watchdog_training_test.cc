// The watchdog inside local training (one thread, fixed seed):
// - a run paused and resumed at batch boundaries any number of times ends
//   with the same model, bit for bit, as an uninterrupted run;
// - a memory release checkpoints at the boundary, and a new process resumes
//   from that checkpoint to the same model, bit for bit;
// - a release by CRIU dump checkpoints, asks for the dump, and after the
//   restore trains on in the same process to the same model, bit for bit;
//   when there is no dump it ends with the release status;
// - under soft pressure each batch is split into micro-batches whose
//   gradients accumulate to the whole batch's: same effective batch, so the
//   model matches the whole-batch run to float rounding (bit-exact is not
//   expected: the sums are taken in another order). ctest runs that test
//   twice: on fast kernels, and on reference kernels (the same bits on every
//   x86-64 CPU; runtime/compute_kernels.h), where a fixed bound holds too.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <thread>

#include "base/testing/simulated_clock.h"
#include "client/memory_release.h"
#include "client/plan_trainer.h"
#include "client/watchdog_gate.h"
#include "runtime/compute_kernels.h"
#include "tests/client/small_training_job.h"
#include "tests/test_files.h"

namespace fedberry::client::watchdog_training_test {
namespace {

using small_job::Config;
using small_job::Data;
using small_job::ExpectBitEqual;
using small_job::Global;

double MaxAbsDiff(const runtime::NamedTensors& a,
                  const runtime::NamedTensors& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst =
        std::max(worst, (a[i].tensor - b[i].tensor).abs().max().item<double>());
  }
  return worst;
}

// Readings of a 1000 MiB board with `pct`% available.
runtime::MemoryReadings At(double pct) {
  runtime::MemoryReadings r;
  r.mem_total_bytes = 1000ull << 20;
  r.mem_available_bytes = static_cast<uint64_t>((1000ull << 20) * pct / 100);
  return r;
}

// Scripted readings the test changes while training runs.
struct Script {
  absl::Mutex mu;
  runtime::MemoryReadings now = At(60);
  void Set(const runtime::MemoryReadings& r) {
    absl::MutexLock lock(&mu);
    now = r;
  }
  runtime::MemoryReadings Get() {
    absl::MutexLock lock(&mu);
    return now;
  }
};

runtime::WatchdogOptions Immediate() {
  runtime::WatchdogOptions o;
  o.soft_hold = o.pause_hold = o.resume_hold = absl::ZeroDuration();
  o.soft_micro_batches = 1;
  return o;
}

// Pauses the real WatchdogGate at chosen boundaries: pressure goes up (the
// gate pauses), a helper thread waits until the trainer is blocked at the
// boundary and then lets pressure fall (the gate resumes it).
class PausingGate : public TrainingGate {
 public:
  PausingGate(WatchdogGate& gate, Script& script, SimulatedClock& clock,
              std::set<int> pause_at)
      : gate_(gate), script_(script), clock_(clock), pause_at_(pause_at) {}
  int micro_batches() override { return gate_.micro_batches(); }
  absl::Status AtBatchBoundary(const std::atomic<bool>& stop) override {
    if (!pause_at_.count(++boundary_)) return gate_.AtBatchBoundary(stop);
    script_.Set(At(10));
    clock_.Advance(absl::Seconds(1));
    gate_.Poll();
    EXPECT_EQ(gate_.state(), runtime::WatchdogState::kPaused);
    std::thread resumer([this] {
      while (!gate_.trainer_waiting()) absl::SleepFor(absl::Milliseconds(1));
      script_.Set(At(60));
      clock_.Advance(absl::Seconds(30));
      gate_.Poll();
    });
    absl::Status s = gate_.AtBatchBoundary(stop);
    resumer.join();
    return s;
  }

 private:
  WatchdogGate& gate_;
  Script& script_;
  SimulatedClock& clock_;
  std::set<int> pause_at_;
  int boundary_ = 0;
};

TEST(WatchdogTraining, PausedAndResumedRunIsBitExact) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  const TaskRef task{3, "r3-abc"};
  std::atomic<bool> stop{false};
  auto reference = small_job::Uninterrupted(data, task);
  ASSERT_TRUE(reference.ok()) << reference.status();

  for (const std::set<int>& at : {std::set<int>{1}, std::set<int>{5, 6, 7},
                                  std::set<int>{2, 9, 17, 23}}) {
    SimulatedClock clock;
    Script script;
    int trims = 0;
    WatchdogGateHooks hooks;
    hooks.trim = [&] { ++trims; };
    WatchdogGate gate(
        Immediate(), [&] { return script.Get(); }, clock, hooks);
    PausingGate pausing(gate, script, clock, at);
    PlanTrainer trainer(data, 1);
    trainer.SetGate(&pausing);
    auto out = trainer.Train(task, Config(), Global(), stop);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectBitEqual(reference->model, out->model);
    EXPECT_EQ(out->num_samples, reference->num_samples);
    EXPECT_EQ(out->metrics.steps(), 24u);
    EXPECT_DOUBLE_EQ(out->metrics.train_loss(),
                     reference->metrics.train_loss());
    EXPECT_EQ(gate.counters().pauses, at.size());
    EXPECT_EQ(gate.boundary_waits(), static_cast<int>(at.size()));
    EXPECT_EQ(trims, static_cast<int>(at.size()));
    EXPECT_EQ(gate.counters().paused, absl::Seconds(30) * at.size());
  }
}

TEST(WatchdogTraining, StopEndsAPause) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  SimulatedClock clock;
  Script script;
  script.Set(At(10));
  WatchdogGate gate(
      Immediate(), [&] { return script.Get(); }, clock);
  gate.Poll();
  ASSERT_EQ(gate.state(), runtime::WatchdogState::kPaused);
  PlanTrainer trainer(data, 1);
  trainer.SetGate(&gate);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    while (!gate.trainer_waiting()) absl::SleepFor(absl::Milliseconds(1));
    stop.store(true);
  });
  auto out = trainer.Train({1, "r1"}, Config(), Global(), stop);
  stopper.join();
  EXPECT_TRUE(absl::IsCancelled(out.status())) << out.status();
}

// The eligibility cool-down's source: now while paused, then the time the
// pause ended, by the gate's clock.
TEST(WatchdogGate, LastPausedIsNowWhilePausedThenWhenThePauseEnded) {
  SimulatedClock clock;
  Script script;
  WatchdogGate gate(
      Immediate(), [&] { return script.Get(); }, clock);
  gate.Poll();
  EXPECT_EQ(gate.LastPaused(), std::nullopt);
  script.Set(At(10));
  gate.Poll();
  ASSERT_EQ(gate.state(), runtime::WatchdogState::kPaused);
  clock.Advance(absl::Seconds(20));
  EXPECT_EQ(gate.LastPaused(), clock.Now());
  script.Set(At(60));
  gate.Poll();
  ASSERT_EQ(gate.state(), runtime::WatchdogState::kRunning);
  const absl::Time ended = clock.Now();
  clock.Advance(absl::Seconds(40));
  EXPECT_EQ(gate.LastPaused(), ended);
}

// Releases the real WatchdogGate at boundary 10: critical pressure arrives
// there.
class ReleasingGate : public TrainingGate {
 public:
  explicit ReleasingGate(WatchdogGate& g, Script& s) : g_(g), s_(s) {}
  int micro_batches() override { return 1; }
  absl::Status AtBatchBoundary(const std::atomic<bool>& stop) override {
    if (++n_ == 10) {
      s_.Set(At(3));
      g_.Poll();
    }
    return g_.AtBatchBoundary(stop);
  }
  absl::Status Release(absl::Status release) override {
    return g_.Release(std::move(release));
  }

 private:
  WatchdogGate& g_;
  Script& s_;
  int n_ = 0;
};

TEST(WatchdogTraining, ReleaseCheckpointsAndANewProcessResumesBitExact) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  const TaskRef task{3, "r3-abc"};
  std::atomic<bool> stop{false};
  auto reference = small_job::Uninterrupted(data, task);
  ASSERT_TRUE(reference.ok());

  const std::string root = dir / "ckpt";
  SimulatedClock clock;
  Script script;
  PlanTrainer* trainer = nullptr;
  int told = 0;
  WatchdogGateHooks hooks;
  // Stands in for the heartbeat that tells the server the board is away.
  hooks.on_release = [&] {
    ++told;
    EXPECT_EQ(trainer->checkpoints_written(), 1);  // after the checkpoint
  };
  WatchdogGate gate(
      Immediate(), [&] { return script.Get(); }, clock, hooks);
  ReleasingGate releasing(gate, script);
  {
    // Checkpoints by policy never (only the release writes one).
    PlanTrainer first(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(root),
                      CheckpointPolicy{0, absl::ZeroDuration()});
    trainer = &first;
    first.SetGate(&releasing);
    auto out = first.Train(task, Config(), Global(), stop);
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(IsMemoryRelease(out.status())) << out.status();
    EXPECT_EQ(first.checkpoints_written(), 1);
    EXPECT_EQ(gate.counters().releases, 1u);
    EXPECT_EQ(told, 1);
  }
  PlanTrainer second(data, 1,
                     std::make_unique<checkpoint::CheckpointStore>(root));
  auto out = second.Train(task, Config(), Global(), stop);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual(reference->model, out->model);
  EXPECT_EQ(out->num_samples, reference->num_samples);
}

TEST(WatchdogTraining, CriuReleaseCheckpointsThenTrainsOnAfterTheRestore) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  const TaskRef task{3, "r3-abc"};
  std::atomic<bool> stop{false};
  auto reference = small_job::Uninterrupted(data, task);
  ASSERT_TRUE(reference.ok());

  for (const bool restored : {true, false}) {
    SCOPED_TRACE(restored ? "dumped and restored" : "no dump");
    SimulatedClock clock;
    Script script;
    PlanTrainer* trainer = nullptr;
    int dumps = 0;
    int told = 0;
    WatchdogGateHooks hooks;
    hooks.on_release = [&] {
      ++told;
      EXPECT_EQ(trainer->checkpoints_written(), 1);
      EXPECT_EQ(dumps, 0);  // the server hears before the dump
    };
    // Stands in for RequestCriuDump: the dump and the restore leave the
    // process as it was; memory is back when it returns.
    hooks.dump = [&]() -> absl::Status {
      ++dumps;
      EXPECT_EQ(trainer->checkpoints_written(), 1);  // checkpointed first
      script.Set(At(60));
      if (!restored) return absl::FailedPreconditionError("no dump");
      return absl::OkStatus();
    };
    WatchdogGate gate(
        Immediate(), [&] { return script.Get(); }, clock, hooks);
    ReleasingGate releasing(gate, script);
    PlanTrainer first(data, 1,
                      std::make_unique<checkpoint::CheckpointStore>(
                          dir / (restored ? "ckpt-restored" : "ckpt-exit")),
                      CheckpointPolicy{0, absl::ZeroDuration()});
    trainer = &first;
    first.SetGate(&releasing);
    auto out = first.Train(task, Config(), Global(), stop);
    EXPECT_EQ(dumps, 1);
    EXPECT_EQ(told, 1);
    EXPECT_EQ(gate.counters().releases, 1u);
    if (restored) {
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(gate.state(), runtime::WatchdogState::kRunning);
      ExpectBitEqual(reference->model, out->model);
      EXPECT_EQ(out->num_samples, reference->num_samples);
    } else {
      ASSERT_FALSE(out.ok());
      EXPECT_TRUE(IsMemoryRelease(out.status())) << out.status();
      EXPECT_EQ(first.checkpoints_written(), 1);
    }
  }
}

// One micro-batched run of the small job with `parts` micro-batches a step.
absl::StatusOr<TrainOutcome> MicroBatched(const runtime::ImageDataset& data,
                                          const TaskRef& task, int parts) {
  SimulatedClock clock;
  Script script;
  script.Set(At(20));  // soft pressure: below 25%, above the pause level
  runtime::WatchdogOptions o = Immediate();
  o.soft_micro_batches = parts;
  WatchdogGate gate(
      o, [&] { return script.Get(); }, clock);
  gate.Poll();
  EXPECT_EQ(gate.micro_batches(), parts);
  PlanTrainer trainer(data, 1);
  trainer.SetGate(&gate);
  std::atomic<bool> stop{false};
  return trainer.Train(task, Config(), Global(), stop);
}

// The global model with every value moved one float to `toward`.
runtime::NamedTensors NudgedGlobal(float toward) {
  runtime::NamedTensors g = Global();
  for (auto& t : g) {
    t.tensor = at::nextafter(t.tensor, at::full_like(t.tensor, toward));
  }
  return g;
}

// Micro-batches sum a batch's gradients in another order than the whole
// batch, so their model matches the whole-batch run to float rounding, not
// bit for bit; over 24 steps a last-bit difference can route a max-pool or
// ReLU another way, and how far that carries depends on the CPU's kernels.
// So the bound comes from control runs that change nothing but last bits:
// the same job from the global model one float up, and one float down.
// On reference kernels (FEDBERRY_KERNELS=reference; the same bits on every
// x86-64 CPU) the difference must also stay under a fixed 1e-5.
TEST(WatchdogTraining, ShrunkBatchesKeepTheEffectiveBatch) {
  at::set_num_threads(1);
  fedberry::testing::TempDir dir;
  const auto data = Data(dir / "data");
  const TaskRef task{3, "r3-abc"};
  std::atomic<bool> stop{false};
  auto reference = small_job::Uninterrupted(data, task);
  ASSERT_TRUE(reference.ok());
  double control = 0;
  for (const float toward : {1e9f, -1e9f}) {
    PlanTrainer nudged(data, 1);
    auto out = nudged.Train(task, Config(), NudgedGlobal(toward), stop);
    ASSERT_TRUE(out.ok()) << out.status();
    control = std::max(control, MaxAbsDiff(reference->model, out->model));
  }
  const double bound = 2 * control;
  const bool exact_kernels =
      runtime::ComputeKernelsInUse() == runtime::ComputeKernels::kReference;
  std::printf("%s; one float off: max |parameter difference| %.3g\n",
              runtime::DescribeComputeKernels().c_str(), control);

  for (int parts : {2, 3, 8}) {  // 8 rows as 4+4, 2+3+3, 1*8
    SCOPED_TRACE(parts);
    auto out = MicroBatched(data, task, parts);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->num_samples, reference->num_samples);
    EXPECT_EQ(out->metrics.steps(), 24u);
    const double diff = MaxAbsDiff(reference->model, out->model);
    std::printf("micro-batches %d: max |parameter difference| %.3g\n", parts,
                diff);
    EXPECT_LE(diff, bound);
    if (exact_kernels) {
      EXPECT_LT(diff, 1e-5);
      EXPECT_NEAR(out->metrics.train_loss(), reference->metrics.train_loss(),
                  1e-5);
      EXPECT_DOUBLE_EQ(out->metrics.train_accuracy(),
                       reference->metrics.train_accuracy());
    }
  }
  // The bound tells batches apart: truly smaller batches (4 rows, 48 steps
  // over the same samples), or micro-batch losses left unweighted (each
  // micro-batch a whole batch's step: twice the learning rate with two),
  // end far outside it.
  v1::TrainConfig half = Config();
  half.set_batch_size(4);
  half.set_local_steps(48);
  v1::TrainConfig unweighted = Config();
  unweighted.set_learning_rate(2 * Config().learning_rate());
  for (const auto& [what, config] : {std::pair{"batch 4 instead of 8", half},
                                     std::pair{"twice the step", unweighted}}) {
    PlanTrainer other(data, 1);
    auto out = other.Train(task, config, Global(), stop);
    ASSERT_TRUE(out.ok());
    const double apart = MaxAbsDiff(reference->model, out->model);
    std::printf("%s: max |parameter difference| %.3g\n", what, apart);
    EXPECT_GT(apart, 10 * bound) << what;
    EXPECT_GT(apart, 1e-3) << what;
  }
}

}  // namespace
}  // namespace fedberry::client::watchdog_training_test
