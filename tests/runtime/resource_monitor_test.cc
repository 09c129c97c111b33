// ResourceMonitor on scripted /proc files and a simulated clock: deltas over
// a round, the sampled peak, and readings that are absent (never zero) when
// a file is missing or malformed.
#include "runtime/resource_monitor.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/testing/simulated_clock.h"
#include "runtime/device_facts.h"
#include "runtime/testing/fake_proc_files.h"

namespace fedberry::runtime::resource_monitor_test {
namespace {

std::string Stat(uint64_t utime, uint64_t stime) {
  return absl::StrFormat(
      "77 (client) R 1 77 77 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 5 1000 200\n",
      utime, stime);
}
std::string Status(uint64_t rss_kb, uint64_t hwm_kb) {
  return absl::StrFormat("Name:\tclient\nVmHWM:\t%d kB\nVmRSS:\t%d kB\n",
                         hwm_kb, rss_kb);
}
std::string NetDev(uint64_t rx, uint64_t tx) {
  return absl::StrCat(
      "Inter-|   Receive |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed "
      "multicast|bytes\n"
      "    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n",
      "  eth0: ", rx, " 1 0 0 0 0 0 0 ", tx, " 1 0 0 0 0 0 0\n");
}

class ResourceMonitorTest : public ::testing::Test {
 protected:
  ResourceMonitorOptions Options() {
    ResourceMonitorOptions o;
    o.ticks_per_second = 100;
    o.fallback_cpu_seconds = [] { return std::optional<double>(); };
    return o;
  }
  FakeProcFiles files_;
  SimulatedClock clock_{absl::FromUnixSeconds(1000)};
};

TEST_F(ResourceMonitorTest, MeasuresTheRound) {
  ResourceMonitor monitor(files_, clock_, Options());
  files_.Set("/proc/self/stat", Stat(100, 20));
  files_.Set("/proc/self/status", Status(1000, 1200));
  files_.Set("/proc/net/dev", NetDev(5000, 7000));
  monitor.BeginRound();
  files_.Set("/proc/self/status", Status(3000, 3000));
  monitor.Sample();
  files_.Set("/proc/self/status", Status(2000, 3000));
  monitor.Sample();
  clock_.Advance(absl::Seconds(4));
  files_.Set("/proc/self/stat", Stat(400, 20 + 100));  // 3 s user, 1 s sys
  files_.Set("/proc/net/dev", NetDev(6000, 7500));
  RoundResources r = monitor.EndRound();
  EXPECT_DOUBLE_EQ(r.wall_seconds, 4.0);
  ASSERT_TRUE(r.cpu_seconds.has_value());
  EXPECT_DOUBLE_EQ(*r.cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(*r.cpu_utilization, 1.0);
  EXPECT_EQ(r.rss_bytes, 2000u * 1024);
  EXPECT_EQ(r.peak_rss_bytes, 3000u * 1024);
  EXPECT_EQ(r.round_peak_rss_bytes, 3000u * 1024);
  EXPECT_EQ(r.interface_rx_bytes, 1000u);
  EXPECT_EQ(r.interface_tx_bytes, 500u);
  EXPECT_EQ(r.samples, 2);
  EXPECT_TRUE(r.problems.empty());
}

TEST_F(ResourceMonitorTest, EachRoundResetsItsPeak) {
  ResourceMonitor monitor(files_, clock_, Options());
  files_.Set("/proc/self/stat", Stat(0, 0));
  files_.Set("/proc/net/dev", NetDev(0, 0));
  files_.Set("/proc/self/status", Status(9000, 9000));
  monitor.BeginRound();
  monitor.Sample();
  monitor.EndRound();
  files_.Set("/proc/self/status", Status(4000, 9000));
  monitor.BeginRound();
  RoundResources r = monitor.EndRound();
  EXPECT_EQ(r.round_peak_rss_bytes, 4000u * 1024);  // the end reading
  EXPECT_EQ(r.peak_rss_bytes, 9000u * 1024);        // the process's peak
  EXPECT_EQ(r.samples, 0);
}

TEST_F(ResourceMonitorTest, MissingFilesLeaveReadingsAbsent) {
  ResourceMonitor monitor(files_, clock_, Options());
  monitor.BeginRound();
  monitor.Sample();
  clock_.Advance(absl::Seconds(2));
  RoundResources r = monitor.EndRound();
  EXPECT_DOUBLE_EQ(r.wall_seconds, 2.0);
  EXPECT_FALSE(r.cpu_seconds.has_value());
  EXPECT_FALSE(r.cpu_utilization.has_value());
  EXPECT_FALSE(r.rss_bytes.has_value());
  EXPECT_FALSE(r.peak_rss_bytes.has_value());
  EXPECT_FALSE(r.round_peak_rss_bytes.has_value());
  EXPECT_FALSE(r.interface_rx_bytes.has_value());
  EXPECT_FALSE(r.interface_tx_bytes.has_value());
  EXPECT_EQ(r.samples, 0);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("/proc/self/stat"), std::string::npos);
}

TEST_F(ResourceMonitorTest, MalformedFilesLeaveReadingsAbsent) {
  ResourceMonitor monitor(files_, clock_, Options());
  files_.Set("/proc/self/stat", "77 (client");
  files_.Set("/proc/self/status", "VmRSS:\tbig kB\n");
  files_.Set("/proc/net/dev", "nonsense\n");
  monitor.BeginRound();
  monitor.Sample();
  clock_.Advance(absl::Seconds(1));
  RoundResources r = monitor.EndRound();
  EXPECT_FALSE(r.cpu_seconds.has_value());
  EXPECT_FALSE(r.rss_bytes.has_value());
  EXPECT_FALSE(r.interface_rx_bytes.has_value());
  EXPECT_EQ(r.samples, 0);
  EXPECT_GE(r.problems.size(), 3u);
}

TEST_F(ResourceMonitorTest, OnlyLoopbackMeansNoInterfaceReading) {
  ResourceMonitor monitor(files_, clock_, Options());
  std::string lo_only = NetDev(1, 1);
  lo_only = lo_only.substr(0, lo_only.find("  eth0"));
  files_.Set("/proc/net/dev", lo_only);
  monitor.BeginRound();
  RoundResources r = monitor.EndRound();
  EXPECT_FALSE(r.interface_rx_bytes.has_value());
}

TEST_F(ResourceMonitorTest, FallsBackToGetrusageForCpu) {
  ResourceMonitorOptions o = Options();
  double cpu = 10;
  o.fallback_cpu_seconds = [&cpu] { return std::optional<double>(cpu); };
  ResourceMonitor monitor(files_, clock_, o);
  monitor.BeginRound();
  cpu = 11.5;
  clock_.Advance(absl::Seconds(3));
  RoundResources r = monitor.EndRound();
  ASSERT_TRUE(r.cpu_seconds.has_value());
  EXPECT_DOUBLE_EQ(*r.cpu_seconds, 1.5);
  EXPECT_DOUBLE_EQ(*r.cpu_utilization, 0.5);
}

TEST_F(ResourceMonitorTest, RealProcFilesGiveRealReadings) {
  ResourceMonitor monitor(ProcFiles::Real(), Clock::Real());
  monitor.BeginRound();
  volatile double x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + i * 0.5;  // some CPU work
  monitor.Sample();
  RoundResources r = monitor.EndRound();
  ASSERT_TRUE(r.rss_bytes.has_value());
  EXPECT_GT(*r.rss_bytes, 0u);
  ASSERT_TRUE(r.peak_rss_bytes.has_value());
  EXPECT_GE(*r.peak_rss_bytes, *r.rss_bytes);
  ASSERT_TRUE(r.cpu_seconds.has_value());
  EXPECT_EQ(r.samples, 1);
}

TEST(DeviceFacts, ReadsSampleFilesAndToleratesMissingOnes) {
  FakeProcFiles files;
  files.Set("/proc/cpuinfo", "model name\t: Test CPU 3000\n");
  files.Set("/proc/meminfo", "MemTotal:  1024 kB\n");
  files.Set("/etc/os-release", "PRETTY_NAME=\"Test OS 1\"\n");
  DeviceFacts facts = ReadDeviceFacts(files);
  EXPECT_EQ(facts.cpu_model, "Test CPU 3000");
  EXPECT_EQ(facts.total_memory_bytes, 1024u * 1024);
  EXPECT_EQ(facts.os, "Test OS 1");
  EXPECT_FALSE(facts.architecture.empty());
  EXPECT_FALSE(facts.kernel.empty());
  EXPECT_GT(facts.cores, 0u);

  FakeProcFiles empty;
  DeviceFacts bare = ReadDeviceFacts(empty);
  EXPECT_FALSE(bare.cpu_model.has_value());
  EXPECT_FALSE(bare.total_memory_bytes.has_value());
  EXPECT_FALSE(bare.os.has_value());
}

}  // namespace
}  // namespace fedberry::runtime::resource_monitor_test
