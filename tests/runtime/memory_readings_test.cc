// The watchdog's readers on sample /proc and cgroup files (cgroup v1 and
// v2, a container's namespaced view), including missing files and
// malformed contents.
#include "runtime/memory_readings.h"

#include <gtest/gtest.h>

#include "runtime/testing/fake_proc_files.h"

namespace fedberry::runtime::memory_readings_test {
namespace {

constexpr char kPsi[] =
    "some avg10=12.50 avg60=3.25 avg300=0.75 total=123456\n"
    "full avg10=1.00 avg60=0.50 avg300=0.10 total=6543\n";

constexpr char kMeminfo[] =
    "MemTotal:        1000000 kB\nMemFree:          100000 kB\n"
    "MemAvailable:     150000 kB\nBuffers:           1000 kB\n";

constexpr char kStatus[] =
    "Name:\tfedberry-client\nVmHWM:\t  201232 kB\n"
    "VmRSS:\t  187004 kB\n";

TEST(ParsePsi, ReadsSomeAndFull) {
  auto psi = ParsePsi(kPsi);
  ASSERT_TRUE(psi.ok()) << psi.status();
  EXPECT_DOUBLE_EQ(psi->some.avg10, 12.5);
  EXPECT_DOUBLE_EQ(psi->some.avg60, 3.25);
  EXPECT_DOUBLE_EQ(psi->some.avg300, 0.75);
  EXPECT_EQ(psi->some.total_us, 123456u);
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->full->avg10, 1.0);
}

TEST(ParsePsi, FullIsOptional) {
  auto psi = ParsePsi("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(psi.ok()) << psi.status();
  EXPECT_FALSE(psi->full.has_value());
}

TEST(ParsePsi, RefusesMalformedText) {
  EXPECT_TRUE(absl::IsInvalidArgument(ParsePsi("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParsePsi("full avg10=1 avg60=1 avg300=1 total=1\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParsePsi("some avg10=x avg60=0 avg300=0 total=0\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParsePsi("some avg10=1.0 avg60=0\n").status()));  // truncated
  EXPECT_TRUE(absl::IsInvalidArgument(ParsePsi("garbage\n").status()));
}

TEST(ParseMemInfo, ReadsTotalAndAvailable) {
  auto info = ParseMemInfo(kMeminfo);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->total_bytes, 1000000u * 1024);
  EXPECT_EQ(info->available_bytes, 150000u * 1024);
}

TEST(ParseMemInfo, RefusesMissingOrMalformedLines) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseMemInfo("MemTotal: 1000 kB\nMemFree: 10 kB\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseMemInfo("MemTotal: 1000 kB\nMemAvailable: lots\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseMemInfo("").status()));
}

TEST(ParseProcSelfCgroup, PrefersTheV1MemoryController) {
  auto p = ParseProcSelfCgroup(
      "9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n0::/\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->version, CgroupPath::Version::kV1);
  EXPECT_EQ(p->path, "/process_api/abc");
  auto joined = ParseProcSelfCgroup("5:cpu,memory:/a:b\n");
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(joined->path, "/a:b");
}

TEST(ParseProcSelfCgroup, ReadsTheV2Path) {
  auto p = ParseProcSelfCgroup("0::/system.slice/fedberry-client.service\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->version, CgroupPath::Version::kV2);
  EXPECT_EQ(p->path, "/system.slice/fedberry-client.service");
}

TEST(ParseProcSelfCgroup, RefusesMalformedOrMemorylessText) {
  EXPECT_TRUE(absl::IsNotFound(ParseProcSelfCgroup("3:cpuset:/\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseProcSelfCgroup("junk\n").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseProcSelfCgroup("4:memory:rel\n").status()));
}

TEST(ParseCgroupLimit, ReadsBytesAndNoLimit) {
  EXPECT_EQ(*ParseCgroupLimit("536870912\n"),
            std::optional<uint64_t>(536870912));
  EXPECT_FALSE(ParseCgroupLimit("max\n")->has_value());
  EXPECT_FALSE(ParseCgroupLimit("9223372036854771712\n")->has_value());
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCgroupLimit("-1").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCgroupLimit("").status()));
  EXPECT_EQ(*ParseCgroupUsage("4096\n"), 4096u);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCgroupUsage("many").status()));
}

TEST(MemoryReader, ReadsEverySignalWithCgroupV2) {
  FakeProcFiles files;
  files.Set("/proc/pressure/memory", kPsi);
  files.Set("/proc/meminfo", kMeminfo);
  files.Set("/proc/self/status", kStatus);
  files.Set("/proc/self/cgroup", "0::/fedberry.slice\n");
  files.Set("/sys/fs/cgroup/fedberry.slice/memory.current", "300000000\n");
  files.Set("/sys/fs/cgroup/fedberry.slice/memory.max", "400000000\n");
  MemoryReader reader(files);
  MemoryReadings r = reader.Read();
  EXPECT_TRUE(r.problems.empty()) << r.problems[0];
  ASSERT_TRUE(r.psi.has_value());
  EXPECT_DOUBLE_EQ(r.psi->some.avg10, 12.5);
  EXPECT_EQ(r.mem_total_bytes, 1000000u * 1024);
  EXPECT_EQ(r.mem_available_bytes, 150000u * 1024);
  EXPECT_EQ(r.rss_bytes, 187004u * 1024);
  EXPECT_EQ(r.cgroup_usage_bytes, 300000000u);
  EXPECT_EQ(r.cgroup_limit_bytes, 400000000u);
  // The cgroup's headroom (100 MB, 25%) is less than MemAvailable in bytes
  // (~154 MB) but more as a share (15%): each takes the tighter one.
  EXPECT_EQ(r.available_bytes(), 100000000u);
  EXPECT_NEAR(*r.available_fraction(), 0.15, 1e-9);
  EXPECT_NE(r.Summary().find("psi some10=12.5%"), std::string::npos)
      << r.Summary();
}

TEST(MemoryReader, ReadsCgroupV1AndFallsBackToTheNamespaceRoot) {
  FakeProcFiles files;
  files.Set("/proc/meminfo", kMeminfo);
  files.Set("/proc/self/cgroup", "4:memory:/docker/abc\n0::/\n");
  // In a container the hierarchy is mounted at its own cgroup.
  files.Set("/sys/fs/cgroup/memory/memory.usage_in_bytes", "2351050752\n");
  files.Set("/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "9223372036854771712\n");
  MemoryReadings r = MemoryReader(files).Read();
  EXPECT_EQ(r.cgroup_usage_bytes, 2351050752u);
  EXPECT_FALSE(r.cgroup_limit_bytes.has_value());  // no limit
  EXPECT_EQ(r.available_bytes(), 150000u * 1024);  // MemAvailable alone
  // PSI and status are missing: said so, and left empty.
  EXPECT_FALSE(r.psi.has_value());
  EXPECT_FALSE(r.rss_bytes.has_value());
  EXPECT_EQ(r.problems.size(), 2u);

  files.Set("/sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "100\n");
  files.Set("/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "1000\n");
  r = MemoryReader(files).Read();
  EXPECT_EQ(r.cgroup_usage_bytes, 100u);
  EXPECT_EQ(r.cgroup_limit_bytes, 1000u);
  EXPECT_NEAR(*r.available_fraction(), 0.15, 1e-9);  // meminfo is tighter
}

TEST(MemoryReader, V2RootCgroupHasNoLimitAndIsNoProblem) {
  FakeProcFiles files;
  files.Set("/proc/pressure/memory", kPsi);
  files.Set("/proc/meminfo", kMeminfo);
  files.Set("/proc/self/status", kStatus);
  files.Set("/proc/self/cgroup", "0::/\n");
  MemoryReadings r = MemoryReader(files).Read();
  EXPECT_TRUE(r.problems.empty());
  EXPECT_FALSE(r.cgroup_usage_bytes.has_value());
}

TEST(MemoryReader, MalformedFilesLeaveReadingsEmptyWithReasons) {
  FakeProcFiles files;
  files.Set("/proc/pressure/memory", "some avg10=oops\n");
  files.Set("/proc/meminfo", "MemTotal: 10 kB\n");
  files.Set("/proc/self/status", "VmRSS: lots\n");
  files.Set("/proc/self/cgroup", "0::/x\n");
  files.Set("/sys/fs/cgroup/x/memory.current", "12\n");
  files.Set("/sys/fs/cgroup/x/memory.max", "unlimited\n");
  MemoryReadings r = MemoryReader(files).Read();
  EXPECT_FALSE(r.psi.has_value());
  EXPECT_FALSE(r.mem_available_bytes.has_value());
  EXPECT_FALSE(r.rss_bytes.has_value());
  EXPECT_EQ(r.cgroup_usage_bytes, 12u);
  EXPECT_FALSE(r.cgroup_limit_bytes.has_value());
  EXPECT_EQ(r.problems.size(), 4u);
  EXPECT_FALSE(r.available_fraction().has_value());
  EXPECT_NE(r.Summary().find("available n/a"), std::string::npos);
}

TEST(MemoryReader, NothingReadableIsNotAnError) {
  FakeProcFiles files;
  MemoryReadings r = MemoryReader(files).Read();
  EXPECT_FALSE(r.available_bytes().has_value());
  EXPECT_EQ(r.problems.size(), 4u);
}

TEST(MemoryReader, ReadsThisMachine) {
  MemoryReadings r = MemoryReader(ProcFiles::Real()).Read();
  EXPECT_TRUE(r.mem_available_bytes.has_value());
  EXPECT_TRUE(r.rss_bytes.has_value());
}

}  // namespace
}  // namespace fedberry::runtime::memory_readings_test
