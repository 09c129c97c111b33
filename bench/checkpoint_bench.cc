// What checkpoints cost: encoding a client's training state (model, SGD
// momentum, RNG) and saving it with the full write protocol (fsync of every
// file, the manifest, the folders, the LATEST pointer), loading and restoring
// it, the store alone on raw bytes, and the XXH3 checksum. BM_TrainStep is one
// LeNet-5 batch of 32, so a save's share of training at the default
// --checkpoint_every_batches=100 is save / (100 x step); BM_EncodeAndSave
// reports it as the "share_at_100_batches_pct" counter for lenet5.
//
// Checkpoints go to $FEDBERRY_BENCH_DIR (default /var/tmp): put it on the
// disk you care about (an SD card on a Pi); tmpfs would hide the fsyncs.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "checkpoint/checkpoint_store.h"
#include "client/training_checkpoint.h"
#include "runtime/model.h"
#include "runtime/model_zoo.h"

namespace fedberry {
namespace {

const char* kModels[] = {"lenet5", "wide-mlp"};
double g_train_step_seconds = 0;  // set by BM_TrainStep, which runs first

std::string BenchDir(const std::string& leaf) {
  const char* env = std::getenv("FEDBERRY_BENCH_DIR");
  std::string dir =
      std::string(env ? env : "/var/tmp") + "/fedberry-bench-" + leaf;
  std::filesystem::remove_all(dir);
  return dir;
}

// A model with momentum buffers filled, as after some training.
struct Trained {
  std::unique_ptr<runtime::Model> net;
  std::unique_ptr<torch::optim::SGD> sgd;
};

Trained MakeTrained(const std::string& name) {
  torch::manual_seed(1);
  Trained t;
  t.net = *runtime::MakeImageModel(name);
  t.sgd = std::make_unique<torch::optim::SGD>(
      t.net->Parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto x = torch::rand({32, 1, 28, 28});
  auto y = torch::randint(0, 10, {32});
  t.sgd->zero_grad();
  torch::nn::functional::cross_entropy(t.net->Forward(x), y).backward();
  t.sgd->step();
  return t;
}

void BM_TrainStep(benchmark::State& state) {
  torch::set_num_threads(1);
  Trained t = MakeTrained("lenet5");
  auto x = torch::rand({32, 1, 28, 28});
  auto y = torch::randint(0, 10, {32});
  const auto start = std::chrono::steady_clock::now();
  int64_t n = 0;
  for (auto _ : state) {
    t.sgd->zero_grad();
    torch::nn::functional::cross_entropy(t.net->Forward(x), y).backward();
    t.sgd->step();
    ++n;
  }
  g_train_step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count() /
      std::max<int64_t>(n, 1);
}
BENCHMARK(BM_TrainStep)->Unit(benchmark::kMillisecond);

void BM_EncodeAndSave(benchmark::State& state) {
  const std::string name = kModels[state.range(0)];
  state.SetLabel(name);
  Trained t = MakeTrained(name);
  checkpoint::CheckpointStore store(BenchDir("save-" + name));
  client::TrainingSnapshot snapshot;
  snapshot.model = name;
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  int64_t n = 0;
  for (auto _ : state) {
    auto files =
        client::EncodeTrainingCheckpoint(snapshot, *t.net, t.sgd.get());
    if (!files.ok() || !store.Save(*files).ok()) {
      state.SkipWithError("save failed");
      break;
    }
    bytes = 0;
    for (const auto& f : *files) bytes += f.bytes.size();
    ++n;
  }
  const double per_save =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count() /
      std::max<int64_t>(n, 1);
  state.counters["checkpoint_bytes"] = bytes;
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * n);
  if (name == "lenet5" && g_train_step_seconds > 0) {
    state.counters["share_at_100_batches_pct"] =
        per_save / (per_save + 100 * g_train_step_seconds) * 100;
  }
  std::filesystem::remove_all(store.root());
}
BENCHMARK(BM_EncodeAndSave)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

void BM_LoadAndRestore(benchmark::State& state) {
  const std::string name = kModels[state.range(0)];
  state.SetLabel(name);
  Trained t = MakeTrained(name);
  checkpoint::CheckpointStore store(BenchDir("load-" + name));
  client::TrainingSnapshot snapshot;
  snapshot.model = name;
  auto files = client::EncodeTrainingCheckpoint(snapshot, *t.net, t.sgd.get());
  if (!files.ok() || !store.Save(*files).ok()) {
    state.SkipWithError("save failed");
    return;
  }
  Trained into = MakeTrained(name);
  for (auto _ : state) {
    auto loaded = store.LoadLatest();
    if (!loaded.ok() || !client::RestoreModel(*loaded, *into.net).ok() ||
        !client::RestoreOptimizer(*loaded, *into.sgd).ok()) {
      state.SkipWithError("load failed");
      break;
    }
  }
  std::filesystem::remove_all(store.root());
}
BENCHMARK(BM_LoadAndRestore)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

// The store alone: 1, 10 and 80 MiB (80 MiB is a 10M-parameter model with
// its momentum buffers, in fp32).
void BM_StoreSave(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0)) << 20;
  checkpoint::CheckpointStore store(BenchDir("store"));
  std::vector<checkpoint::CheckpointFile> files = {
      {"model.pt", std::string(size, 'x')}};
  for (auto _ : state) {
    if (!store.Save(files).ok()) {
      state.SkipWithError("save failed");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(size) * state.iterations());
  std::filesystem::remove_all(store.root());
}
BENCHMARK(BM_StoreSave)
    ->Arg(1)
    ->Arg(10)
    ->Arg(80)
    ->Unit(benchmark::kMillisecond);

void BM_Checksum(benchmark::State& state) {
  const std::string data(64 << 20, 'x');
  for (auto _ : state) benchmark::DoNotOptimize(checkpoint::Checksum(data));
  state.SetBytesProcessed(static_cast<int64_t>(data.size()) *
                          state.iterations());
}
BENCHMARK(BM_Checksum)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fedberry

BENCHMARK_MAIN();
