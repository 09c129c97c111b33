// Measures what a training round costs this process: wall time, CPU time
// and utilisation (/proc/self/stat, getrusage as fallback), current, peak
// and per-round peak resident memory (/proc/self/status VmRSS/VmHWM, with
// periodic Sample() calls catching the round's peak) and the interface byte
// counters of /proc/net/dev. Readings go through a ProcFiles and a Clock, so
// tests drive it with sample files and a simulated clock.
//
// A reading that cannot be taken (file missing, malformed, no interface) is
// left empty in RoundResources and its reason recorded in `problems`; it is
// never reported as 0.
//
// Usage: BeginRound(); ... Sample() from a PeriodicSampler ...; EndRound().
// Thread-safety: thread-safe; Sample() is meant to run on a sampler thread
// while the owner calls BeginRound/EndRound.
#ifndef FEDBERRY_RUNTIME_RESOURCE_MONITOR_H_
#define FEDBERRY_RUNTIME_RESOURCE_MONITOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "runtime/proc_files.h"
#include "runtime/proc_parsers.h"

namespace fedberry::runtime {

// The readings of one round. Empty optionals are readings that were not
// available.
struct RoundResources {
  double wall_seconds = 0;
  std::optional<double> cpu_seconds;             // user + system over the round
  std::optional<double> cpu_utilization;         // cpu_seconds / wall_seconds
  std::optional<uint64_t> rss_bytes;             // VmRSS at EndRound
  std::optional<uint64_t> peak_rss_bytes;        // VmHWM at EndRound
  std::optional<uint64_t> round_peak_rss_bytes;  // max VmRSS seen in round
  std::optional<uint64_t> interface_rx_bytes;    // non-loopback, delta
  std::optional<uint64_t> interface_tx_bytes;
  int samples = 0;                    // Sample() calls that read VmRSS
  std::vector<std::string> problems;  // why readings are missing
};

struct ResourceMonitorOptions {
  // Clock ticks per second of /proc/<pid>/stat times (sysconf(_SC_CLK_TCK)).
  long ticks_per_second = 100;
  // CPU seconds of this process when /proc/self/stat is unavailable;
  // default: getrusage(RUSAGE_SELF). Return nullopt for "unavailable".
  std::function<std::optional<double>()> fallback_cpu_seconds;
  std::string stat_path = "/proc/self/stat";
  std::string status_path = "/proc/self/status";
  std::string net_dev_path = "/proc/net/dev";
};

// The options of this machine: real tick rate and getrusage fallback.
ResourceMonitorOptions DefaultResourceMonitorOptions();

class ResourceMonitor {
 public:
  // `files` and `clock` must outlive the monitor.
  ResourceMonitor(
      ProcFiles& files, Clock& clock,
      ResourceMonitorOptions options = DefaultResourceMonitorOptions());

  // Starts a round: takes the CPU and interface baselines and resets the
  // round's sampled peak.
  void BeginRound();
  // One periodic reading of VmRSS (for the round's peak). Cheap: one small
  // file read and parse. A failed reading is skipped.
  void Sample();
  // Ends the round begun last and returns its readings. Without a
  // BeginRound, the round is empty (wall 0, no deltas).
  RoundResources EndRound();

 private:
  std::optional<double> CpuSeconds(std::vector<std::string>& problems);
  std::optional<NetDevTotals> NetTotals(std::vector<std::string>& problems);

  ProcFiles& files_;
  Clock& clock_;
  const ResourceMonitorOptions options_;

  absl::Mutex mu_;
  bool begun_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time start_ ABSL_GUARDED_BY(mu_);
  std::optional<double> start_cpu_ ABSL_GUARDED_BY(mu_);
  std::optional<NetDevTotals> start_net_ ABSL_GUARDED_BY(mu_);
  std::optional<uint64_t> round_peak_ ABSL_GUARDED_BY(mu_);
  int samples_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> begin_problems_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_RESOURCE_MONITOR_H_
