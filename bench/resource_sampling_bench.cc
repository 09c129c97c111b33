// What the client's resource measurement costs: one periodic sample
// (VmRSS from /proc/self/status), a round's begin + end readings, and the
// device facts read once at join. The "overhead_pct" counter is the CPU
// share of one core that sampling takes at the default interval
// (runtime::kDefaultSampleInterval): time per sample / interval.
#include <benchmark/benchmark.h>

#include <chrono>

#include "runtime/device_facts.h"
#include "runtime/periodic_sampler.h"
#include "runtime/resource_monitor.h"

namespace fedberry::runtime {
namespace {

template <typename F>
void Measure(benchmark::State& state, F f, double per_interval) {
  const auto start = std::chrono::steady_clock::now();
  int64_t n = 0;
  for (auto _ : state) {
    f();
    ++n;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const double interval = absl::ToDoubleSeconds(kDefaultSampleInterval);
  if (n > 0 && per_interval > 0) {
    state.counters["overhead_pct"] =
        seconds / n * per_interval / interval * 100;
  }
}

void BM_Sample(benchmark::State& state) {
  ResourceMonitor monitor(ProcFiles::Real(), Clock::Real());
  monitor.BeginRound();
  Measure(
      state, [&] { monitor.Sample(); }, 1);
}
BENCHMARK(BM_Sample);

void BM_BeginAndEndRound(benchmark::State& state) {
  ResourceMonitor monitor(ProcFiles::Real(), Clock::Real());
  // Once per round, not per interval: no overhead share.
  Measure(
      state,
      [&] {
        monitor.BeginRound();
        benchmark::DoNotOptimize(monitor.EndRound());
      },
      0);
}
BENCHMARK(BM_BeginAndEndRound);

void BM_DeviceFacts(benchmark::State& state) {
  Measure(
      state,
      [] { benchmark::DoNotOptimize(ReadDeviceFacts(ProcFiles::Real())); }, 0);
}
BENCHMARK(BM_DeviceFacts);

}  // namespace
}  // namespace fedberry::runtime

BENCHMARK_MAIN();
