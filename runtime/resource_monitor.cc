#include "runtime/resource_monitor.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {

ResourceMonitorOptions DefaultResourceMonitorOptions() {
  ResourceMonitorOptions options;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks > 0) options.ticks_per_second = ticks;
  options.fallback_cpu_seconds = []() -> std::optional<double> {
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
    auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  };
  return options;
}

ResourceMonitor::ResourceMonitor(ProcFiles& files, Clock& clock,
                                 ResourceMonitorOptions options)
    : files_(files), clock_(clock), options_(std::move(options)) {}

std::optional<double> ResourceMonitor::CpuSeconds(
    std::vector<std::string>& problems) {
  absl::StatusOr<std::string> text = files_.Read(options_.stat_path);
  absl::StatusOr<ProcessCpuTicks> ticks =
      text.ok() ? ParseProcStat(*text)
                : absl::StatusOr<ProcessCpuTicks>(text.status());
  if (ticks.ok() && options_.ticks_per_second > 0) {
    return static_cast<double>(ticks->user + ticks->system) /
           static_cast<double>(options_.ticks_per_second);
  }
  problems.push_back(std::string(ticks.status().message()));
  if (options_.fallback_cpu_seconds) return options_.fallback_cpu_seconds();
  return std::nullopt;
}

std::optional<NetDevTotals> ResourceMonitor::NetTotals(
    std::vector<std::string>& problems) {
  absl::StatusOr<std::string> text = files_.Read(options_.net_dev_path);
  if (!text.ok()) {
    problems.push_back(std::string(text.status().message()));
    return std::nullopt;
  }
  absl::StatusOr<NetDevTotals> totals = ParseNetDev(*text);
  if (!totals.ok()) {
    problems.push_back(std::string(totals.status().message()));
    return std::nullopt;
  }
  if (totals->interfaces == 0) {
    problems.push_back(
        absl::StrCat(options_.net_dev_path, " lists no interface but 'lo'"));
    return std::nullopt;
  }
  return *totals;
}

void ResourceMonitor::BeginRound() {
  // Read outside the lock so a concurrent Sample() never waits on file I/O.
  std::vector<std::string> problems;
  std::optional<double> cpu = CpuSeconds(problems);
  std::optional<NetDevTotals> net = NetTotals(problems);
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  begun_ = true;
  start_ = now;
  start_cpu_ = cpu;
  start_net_ = net;
  round_peak_.reset();
  samples_ = 0;
  begin_problems_ = std::move(problems);
}

void ResourceMonitor::Sample() {
  absl::StatusOr<std::string> text = files_.Read(options_.status_path);
  if (!text.ok()) return;
  absl::StatusOr<ProcessMemory> memory = ParseProcStatus(*text);
  if (!memory.ok() || !memory->rss_bytes) return;
  absl::MutexLock lock(&mu_);
  round_peak_ = std::max(round_peak_.value_or(0), *memory->rss_bytes);
  ++samples_;
}

RoundResources ResourceMonitor::EndRound() {
  RoundResources out;
  std::optional<double> cpu = CpuSeconds(out.problems);
  std::optional<NetDevTotals> net = NetTotals(out.problems);
  absl::StatusOr<std::string> status_text = files_.Read(options_.status_path);
  absl::StatusOr<ProcessMemory> memory =
      status_text.ok() ? ParseProcStatus(*status_text)
                       : absl::StatusOr<ProcessMemory>(status_text.status());
  if (memory.ok()) {
    out.rss_bytes = memory->rss_bytes;
    out.peak_rss_bytes = memory->peak_rss_bytes;
    if (!memory->rss_bytes) {
      out.problems.push_back(
          absl::StrCat(options_.status_path, " has no VmRSS line"));
    }
  } else {
    out.problems.push_back(std::string(memory.status().message()));
  }
  const absl::Time now = clock_.Now();

  absl::MutexLock lock(&mu_);
  if (!begun_) {
    out.problems.push_back("EndRound without BeginRound");
    return out;
  }
  begun_ = false;
  out.problems.insert(out.problems.begin(), begin_problems_.begin(),
                      begin_problems_.end());
  out.wall_seconds = std::max(0.0, absl::ToDoubleSeconds(now - start_));
  if (cpu && start_cpu_) {
    out.cpu_seconds = std::max(0.0, *cpu - *start_cpu_);
    if (out.wall_seconds > 0) {
      out.cpu_utilization = *out.cpu_seconds / out.wall_seconds;
    }
  }
  if (net && start_net_ && net->rx_bytes >= start_net_->rx_bytes &&
      net->tx_bytes >= start_net_->tx_bytes) {
    out.interface_rx_bytes = net->rx_bytes - start_net_->rx_bytes;
    out.interface_tx_bytes = net->tx_bytes - start_net_->tx_bytes;
  }
  // The end reading counts as a sample too: a round shorter than the
  // sampling interval still has a peak.
  if (out.rss_bytes) {
    round_peak_ = std::max(round_peak_.value_or(0), *out.rss_bytes);
  }
  out.round_peak_rss_bytes = round_peak_;
  // The kernel folds per-thread RSS counters into VmHWM lazily, so a
  // sampled VmRSS can run ahead of it: the peak is at least what was seen.
  if (out.peak_rss_bytes && round_peak_) {
    out.peak_rss_bytes = std::max(*out.peak_rss_bytes, *round_peak_);
  }
  out.samples = samples_;
  return out;
}

}  // namespace fedberry::runtime
