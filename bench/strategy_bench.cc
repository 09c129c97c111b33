// What aggregation costs the server: for one strategy, N simulated updates
// of a model (LeNet-5's layout, or a ~6 MB model of 1.5M floats) go through
// Strategy::BeginRound / Add / Result as the round coordinator drives them.
// Prints the time per Add, the time of Result, and peak RSS against the RSS
// before the round (what the round itself costs; the rest is LibTorch and
// the model). bench/strategy_bench.sh runs every strategy at 4, 32 and 128
// updates, one process each so peak RSS is per configuration.
//
//   build/bin/strategy_bench --strategy=median --updates=128 --model=6mb
//
// Updates are made one at a time (global + small noise) and dropped after
// Add, as the server does with a decoded push; their making is not timed.
// Prints figures, asserts nothing.
#include <sys/resource.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "runtime/model.h"
#include "runtime/model_zoo.h"
#include "server/strategy/strategy.h"

ABSL_FLAG(std::string, strategy, "fedavg",
          "fedavg, fedprox, fedadam, fedyogi, fedadagrad, median, "
          "trimmed_mean, krum, multikrum.");
ABSL_FLAG(int, updates, 32, "Updates in the round.");
ABSL_FLAG(std::string, model, "lenet5", "lenet5 or 6mb (1.5M floats).");
ABSL_FLAG(std::string, spill_dir, "/tmp",
          "Where the robust rules keep the round's updates.");

namespace fedberry {
namespace {

double RssMiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == field) {
      double kb = 0;
      in >> kb;
      return kb / 1024.0;
    }
    std::getline(in, key);
  }
  return -1;
}

absl::StatusOr<runtime::NamedTensors> ModelLayout(const std::string& name) {
  if (name == "6mb") {
    // An MLP-like layout: two large layers and their biases, 1.5M floats.
    return runtime::NamedTensors{{"fc1.weight", torch::randn({1024, 1024})},
                                 {"fc1.bias", torch::zeros({1024})},
                                 {"fc2.weight", torch::randn({448, 1024})},
                                 {"fc2.bias", torch::zeros({448})}};
  }
  auto model = runtime::MakeImageModel(name);
  if (!model.ok()) return model.status();
  runtime::NamedTensors state;
  for (auto& t : (*model)->State()) state.push_back({t.name, t.tensor.clone()});
  return state;
}

int Run() {
  torch::set_num_threads(1);
  torch::manual_seed(1);
  auto layout = ModelLayout(absl::GetFlag(FLAGS_model));
  if (!layout.ok()) {
    std::fprintf(stderr, "strategy_bench: %s\n",
                 std::string(layout.status().message()).c_str());
    return 2;
  }
  auto global = std::make_shared<const runtime::NamedTensors>(*layout);
  int64_t floats = 0;
  for (const auto& t : *global) floats += t.tensor.numel();
  const int n = absl::GetFlag(FLAGS_updates);
  server::StrategyOptions options;
  options.name = absl::GetFlag(FLAGS_strategy);
  options.spill_dir = absl::GetFlag(FLAGS_spill_dir);
  options.trim_fraction = 0.1;
  // Krum's f as large as n > 2f + 2 allows, up to a quarter of the round.
  options.byzantine = std::max(0, std::min((n - 3) / 2, n / 4));
  options.krum_keep =
      options.name == "multikrum" ? std::max(1, n - options.byzantine) : 0;
  auto strategy = server::MakeStrategy(options, *global);
  if (!strategy.ok()) {
    std::fprintf(stderr, "strategy_bench: %s\n",
                 std::string(strategy.status().message()).c_str());
    return 2;
  }
  const double rss_before = RssMiB("VmRSS:");
  auto round = (*strategy)->BeginRound(global);
  if (!round.ok()) {
    std::fprintf(stderr, "strategy_bench: %s\n",
                 std::string(round.status().message()).c_str());
    return 2;
  }
  absl::Duration add_time;
  for (int i = 0; i < n; ++i) {
    runtime::NamedTensors update;
    for (const auto& t : *global) {
      update.push_back({t.name, t.tensor + 0.01 * torch::randn_like(t.tensor)});
    }
    const absl::Time start = absl::Now();
    if (auto s = (*round)->Add(update, 100 + i); !s.ok()) {
      std::fprintf(stderr, "strategy_bench: Add: %s\n",
                   std::string(s.message()).c_str());
      return 1;
    }
    add_time += absl::Now() - start;
  }
  const absl::Time start = absl::Now();
  auto result = (*round)->Result();
  const absl::Duration result_time = absl::Now() - start;
  if (!result.ok()) {
    std::fprintf(stderr, "strategy_bench: Result: %s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  (*strategy)->Commit(**round);
  std::printf("%-13s %-7s %8.2f %7d %12.3f %11.1f %16.3f %14.1f %15.1f\n",
              options.name.c_str(), absl::GetFlag(FLAGS_model).c_str(),
              floats * 4 / 1e6, n, absl::ToDoubleMilliseconds(add_time) / n,
              absl::ToDoubleMilliseconds(result_time),
              (absl::ToDoubleMilliseconds(add_time) +
               absl::ToDoubleMilliseconds(result_time)) /
                  n,
              rss_before, RssMiB("VmHWM:"));
  return 0;
}

}  // namespace
}  // namespace fedberry

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Aggregation time per update and peak RSS of one strategy "
      "(bench/strategy_bench.sh runs them all).");
  absl::ParseCommandLine(argc, argv);
  return fedberry::Run();
}
