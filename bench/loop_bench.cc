// The training loop of one client, alone: samples/s of runtime::Train on a
// client's Fashion-MNIST shard (LeNet-5, SGD, by default 1 thread, batch 32,
// the shard of client 0 of 4 as in the default job), then of
// runtime::Evaluate on the 10k test split at several batch sizes. Compare
// with bench/reference/loop_bench.py (the same loop in Python PyTorch):
//
//   build/bin/loop_bench                 # heap tuning on, as the binaries
//   build/bin/loop_bench --heap_tuning=false
//   build/bin/loop_bench_refblas         # LibTorch's sgemm_ left to libblas
//   build/bin/loop_bench --model=lenet5.pt  # a TorchScript LeNet-5
//                                           #
//                                           (bench/reference/export_lenet5.py)
//
// Prints figures (median of --reps runs), asserts nothing.
#include <sys/resource.h>
#include <ATen/Context.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "runtime/compute_kernels.h"
#include "runtime/dataset.h"
#include "runtime/heap_tuning.h"
#include "runtime/image_dataset.h"
#include "runtime/model.h"
#include "runtime/model_zoo.h"
#include "runtime/testing/vector_dataset.h"
#include "runtime/torchscript_model.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"

#if FEDBERRY_FAST_SGEMM
#include "runtime/fast_sgemm.h"
#endif

ABSL_FLAG(std::string, data, fedberry::runtime::kDefaultFashionMnistDir,
          "Fashion-MNIST folder.");
ABSL_FLAG(std::string, model, "lenet5",
          "A built-in model, or a TorchScript file taking [N,1,28,28].");
ABSL_FLAG(std::string, synthetic_shape, "",
          "Train a zoo model on random samples of this shape (e.g. 3,32,32 "
          "for resnet8) instead of Fashion-MNIST.");
ABSL_FLAG(int, synthetic_rows, 3000, "Samples of the synthetic data set.");
ABSL_FLAG(bool, heap_tuning, true,
          "Fixed malloc thresholds (runtime/heap_tuning.h), as the binaries.");
ABSL_FLAG(int, threads, 1, "LibTorch intra-op threads.");
ABSL_FLAG(int, batch_size, 32, "Training batch size.");
ABSL_FLAG(int, partition_count, 4, "Train on shard 0 of this many (IID).");
ABSL_FLAG(int, steps, 0, "Batches per timed run (0: one epoch of the shard).");
ABSL_FLAG(int, reps, 3, "Timed runs; the median is printed.");
ABSL_FLAG(int, warmup_steps, 20,
          "Untimed training batches first (first-call costs: allocator "
          "growth, kernel set-up).");
ABSL_FLAG(int, eval_samples, 0,
          "Evaluate on the first N samples of the test set (0: all of it).");
ABSL_FLAG(bool, mkldnn, true,
          "Let LibTorch run float convolutions in oneDNN (false: its own "
          "im2col and the BLAS's sgemm_).");
ABSL_FLAG(int, gemm_size, 0,
          "Also time an N x N x N float matrix product (torch::mm), GFLOPS.");
ABSL_FLAG(std::string, eval_batches, "50,100,250,500,1000,10000",
          "Evaluation batch sizes to time (empty: no evaluation).");

namespace fedberry::runtime {
namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// This process's proportional set size, from /proc/self/smaps_rollup (0
// where the kernel has none).
long PssKib() {
  FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return 0;
  char line[256];
  long pss = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "Pss: %ld kB", &pss) == 1) break;
  }
  std::fclose(f);
  return pss;
}

// The first `n` samples of a data set: a short evaluation for emulated
// boards, where every sample costs seconds.
class FirstSamples : public Dataset {
 public:
  FirstSamples(std::unique_ptr<Dataset> inner, int64_t n)
      : inner_(std::move(inner)), n_(std::min(n, inner_->size())) {}
  int64_t size() const override { return n_; }
  const std::vector<int64_t>& sample_shape() const override {
    return inner_->sample_shape();
  }
  int64_t label_count() const override { return inner_->label_count(); }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    inner_->Read(rows, n, inputs, labels);
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  const std::unique_ptr<Dataset> inner_;
  const int64_t n_;
};

struct Timed {
  double wall = 0, cpu = 0;
  long faults = 0;
};

template <typename F>
Timed Time(F f) {
  const absl::Time t0 = absl::Now();
  const double c0 = CpuSeconds();
  const long f0 = MinorFaults();
  f();
  return {absl::ToDoubleSeconds(absl::Now() - t0), CpuSeconds() - c0,
          MinorFaults() - f0};
}

Timed Median(std::vector<Timed> v) {
  std::sort(v.begin(), v.end(),
            [](const Timed& a, const Timed& b) { return a.wall < b.wall; });
  return v[v.size() / 2];
}

std::string SgemmName() {
#if FEDBERRY_FAST_SGEMM
  return "oneDNN (executable's sgemm_)";
#else
  return "libblas.so.3";
#endif
}

// GFLOPS of an n x n x n float product, the median of --reps runs.
void TimeGemm(int n) {
  torch::manual_seed(1);
  const torch::Tensor a = torch::randn({n, n}), b = torch::randn({n, n});
  (void)torch::mm(a, b);  // warm-up
  std::vector<Timed> runs;
  for (int r = 0; r < absl::GetFlag(FLAGS_reps); ++r) {
    runs.push_back(Time([&] { (void)torch::mm(a, b); }));
  }
  const Timed t = Median(runs);
  std::printf("gemm   n=%-5d %8.2f GFLOPS (median of %zu: %.4f s wall)\n", n,
              2.0 * n * n * n / t.wall / 1e9, runs.size(), t.wall);
}

int Run() {
  const bool tuned = absl::GetFlag(FLAGS_heap_tuning) && TuneHeapForTraining();
  torch::set_num_threads(absl::GetFlag(FLAGS_threads));
  at::globalContext().setUserEnabledMkldnn(absl::GetFlag(FLAGS_mkldnn));
  PartitionSpec spec;
  spec.count = absl::GetFlag(FLAGS_partition_count);
  spec.seed = 42;  // fedberry-client's --partition_seed default
  auto train = LoadIdxDataset(absl::GetFlag(FLAGS_data), Split::kTrain, &spec);
  auto test = LoadIdxDataset(absl::GetFlag(FLAGS_data), Split::kTest);
  if (!train.ok() || !test.ok()) {
    std::fprintf(
        stderr, "loop_bench: %s\n",
        std::string((train.ok() ? test.status() : train.status()).message())
            .c_str());
    return 1;
  }
  std::printf(
      "loop_bench: C++ LibTorch %s, threads=%d, heap tuning %s, "
      "sgemm %s, convolutions %s\n%s\n",
      TORCH_VERSION, torch::get_num_threads(), tuned ? "on" : "off",
      SgemmName().c_str(),
      absl::GetFlag(FLAGS_mkldnn) ? "oneDNN" : "im2col + sgemm_",
      DescribeComputeKernels().c_str());
  if (absl::GetFlag(FLAGS_gemm_size) > 0) TimeGemm(absl::GetFlag(FLAGS_gemm_size));

  torch::manual_seed(1);
  const std::string model_name = absl::GetFlag(FLAGS_model);
  std::unique_ptr<Model> model;
  if (IsZooModel(model_name)) {
    model = *MakeImageModel(model_name);
  } else {
    auto loaded = LoadTorchScriptModel(model_name);
    if (!loaded.ok()) {
      std::fprintf(stderr, "loop_bench: %s\n",
                   std::string(loaded.status().message()).c_str());
      return 1;
    }
    model = std::move(loaded->model);
  }
  std::printf("model %s\n", model->name().c_str());
  Model* net = model.get();
  DataBinding binding;
  binding.mean = {kFashionMnistMean};
  binding.std = {kFashionMnistStd};
  std::unique_ptr<Dataset> train_set =
      MakeImageRowsDataset(*std::move(train), binding);
  std::unique_ptr<Dataset> test_set =
      MakeImageRowsDataset(*std::move(test), binding);
  if (!absl::GetFlag(FLAGS_synthetic_shape).empty()) {
    std::vector<int64_t> shape;
    int64_t values = 1;
    for (absl::string_view d :
         absl::StrSplit(absl::GetFlag(FLAGS_synthetic_shape), ',')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(d, &v) || v < 1) return 1;
      shape.push_back(v);
      values *= v;
    }
    const int64_t rows = absl::GetFlag(FLAGS_synthetic_rows);
    std::vector<float> x(rows * values), y(rows);
    std::mt19937 rng(1);
    std::normal_distribution<float> noise;
    for (auto& v : x) v = noise(rng);
    for (auto& v : y) v = static_cast<float>(rng() % 10);
    train_set = std::make_unique<testing::VectorDataset>(shape, x, y, 10);
    test_set = std::make_unique<testing::VectorDataset>(shape, x, y, 10);
    if (IsZooModel(model_name)) {  // a TorchScript file keeps its network
      auto made = MakeZooModel(model_name, shape, 10);
      if (!made.ok()) return 1;
      model = *std::move(made);
      net = model.get();
    }
    std::printf("synthetic data: %lld samples of %s\n",
                static_cast<long long>(rows),
                absl::GetFlag(FLAGS_synthetic_shape).c_str());
  }
  const int64_t train_rows_used = train_set->size();
  const Objective objective =
      *Objective::Make(TaskKind::kClassification, "cross_entropy", *net);
  TrainOptions options;
  options.batch_size = absl::GetFlag(FLAGS_batch_size);
  options.local_steps = absl::GetFlag(FLAGS_steps);
  if (options.local_steps <= 0) {
    options.local_steps =
        (train_rows_used + options.batch_size - 1) / options.batch_size;
  }
  // Warm-up: first-call costs (kernel JIT, allocator growth).
  TrainOptions warm = options;
  warm.local_steps = absl::GetFlag(FLAGS_warmup_steps);
  (void)Train(*net, *train_set, objective, warm);

  std::vector<Timed> runs;
  int64_t samples = 0;
  double loss = 0;
  for (int r = 0; r < absl::GetFlag(FLAGS_reps); ++r) {
    options.seed = 100 + r;
    runs.push_back(Time([&] {
      auto result = Train(*net, *train_set, objective, options);
      samples = result->samples;
      loss = result->mean_loss;
    }));
  }
  const Timed t = Median(runs);
  std::printf(
      "train  batch=%-5d %8.0f samples/s  (median of %zu: %lld "
      "samples in %.4f s wall, %.3f s CPU, %ld minor faults; "
      "loss %.4f)\n",
      static_cast<int>(options.batch_size), samples / t.wall, runs.size(),
      static_cast<long long>(samples), t.wall, t.cpu, t.faults, loss);

  if (absl::GetFlag(FLAGS_eval_samples) > 0) {
    test_set = std::make_unique<FirstSamples>(
        std::move(test_set), absl::GetFlag(FLAGS_eval_samples));
  }
  for (absl::string_view part : absl::StrSplit(
           absl::GetFlag(FLAGS_eval_batches), ',', absl::SkipEmpty())) {
    int batch = 0;
    if (!absl::SimpleAtoi(part, &batch) || batch <= 0) continue;
    (void)Evaluate(*net, *test_set, objective, batch);  // warm-up
    std::vector<Timed> evals;
    double accuracy = 0;
    for (int r = 0; r < absl::GetFlag(FLAGS_reps); ++r) {
      evals.push_back(Time([&] {
        accuracy = Evaluate(*net, *test_set, objective, batch)->accuracy;
      }));
    }
    const Timed e = Median(evals);
    std::printf(
        "eval   batch=%-5d %8.0f samples/s  (median of %zu: %lld "
        "samples in %.4f s wall, %.3f s CPU, %ld minor faults; "
        "accuracy %.4f)\n",
        batch, test_set->size() / e.wall, evals.size(),
        static_cast<long long>(test_set->size()), e.wall, e.cpu, e.faults,
        accuracy);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak RSS %.1f MiB, PSS now %.1f MiB\n", usage.ru_maxrss / 1024.0,
              PssKib() / 1024.0);
  int64_t state_bytes = 0;
  for (const NamedTensor& t : net->State()) state_bytes += t.tensor.nbytes();
  std::printf("model state %lld bytes (a round moves it each way, raw fp32)\n",
              static_cast<long long>(state_bytes));
#if FEDBERRY_FAST_SGEMM
  std::printf("sgemm_ calls through oneDNN: %llu (handed to libblas: %llu)\n",
              static_cast<unsigned long long>(FastSgemmCalls()),
              static_cast<unsigned long long>(FastSgemmFallbacks()));
#endif
  return 0;
}

}  // namespace
}  // namespace fedberry::runtime

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "One client's training loop (samples/s) and the 10k evaluation by batch "
      "size; compare with bench/reference/loop_bench.py.");
  absl::ParseCommandLine(argc, argv);
  return fedberry::runtime::Run();
}
