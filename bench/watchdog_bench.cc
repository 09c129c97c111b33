// What the memory-pressure watchdog costs: one poll at its default interval
// (1 s, --watchdog_poll_interval) is one MemoryReader::Read (PSI,
// /proc/meminfo, /proc/self/status, /proc/self/cgroup and the cgroup's two
// memory files) plus one state-machine step. The "overhead_pct" counter is
// the share of one core that polling takes at the default interval: time
// per poll / interval. The state machine alone is measured on a fixed
// reading to show where the time goes.
#include <benchmark/benchmark.h>

#include <chrono>

#include "runtime/memory_readings.h"
#include "runtime/watchdog.h"

namespace fedberry::runtime {
namespace {

constexpr absl::Duration kDefaultPollInterval = absl::Seconds(1);

template <typename F>
void Measure(benchmark::State& state, F f) {
  const auto start = std::chrono::steady_clock::now();
  int64_t n = 0;
  for (auto _ : state) {
    f();
    ++n;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (n > 0) {
    state.counters["overhead_pct"] =
        seconds / n / absl::ToDoubleSeconds(kDefaultPollInterval) * 100;
  }
}

void BM_ReadMemory(benchmark::State& state) {
  MemoryReader reader(ProcFiles::Real());
  Measure(state, [&] { benchmark::DoNotOptimize(reader.Read()); });
}
BENCHMARK(BM_ReadMemory);

void BM_WatchdogPoll(benchmark::State& state) {
  MemoryReader reader(ProcFiles::Real());
  Watchdog watchdog({}, Clock::Real());
  Measure(state,
          [&] { benchmark::DoNotOptimize(watchdog.Step(reader.Read())); });
}
BENCHMARK(BM_WatchdogPoll);

void BM_WatchdogStepOnly(benchmark::State& state) {
  const MemoryReadings r = MemoryReader(ProcFiles::Real()).Read();
  Watchdog watchdog({}, Clock::Real());
  Measure(state, [&] { benchmark::DoNotOptimize(watchdog.Step(r)); });
}
BENCHMARK(BM_WatchdogStepOnly);

}  // namespace
}  // namespace fedberry::runtime

BENCHMARK_MAIN();
