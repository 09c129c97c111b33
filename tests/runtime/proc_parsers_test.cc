// The /proc parsers on sample files from real machines (an x86 build host
// and a Raspberry Pi 3 B+), and on truncated and malformed ones.
#include "runtime/proc_parsers.h"

#include <gtest/gtest.h>

namespace fedberry::runtime::proc_parsers_test {
namespace {

// A real /proc/self/stat line, with a command name holding ") (".
constexpr char kStat[] =
    "4242 (fedberry) (cl) S 1 4242 4242 0 -1 4194560 5617 0 12 0 "
    "1234 56 0 0 20 0 3 0 987654 123456789 20000 18446744073709551615 1 1 0 "
    "0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ParseProcStat, ReadsUserAndSystemTicks) {
  auto ticks = ParseProcStat(kStat);
  ASSERT_TRUE(ticks.ok()) << ticks.status();
  EXPECT_EQ(ticks->user, 1234u);
  EXPECT_EQ(ticks->system, 56u);
}

TEST(ParseProcStat, RefusesMalformedText) {
  EXPECT_TRUE(absl::IsInvalidArgument(ParseProcStat("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseProcStat("garbage").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseProcStat("1 (x) S 1 2 3 4 5").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseProcStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 abc 56 0 0").status()));
}

constexpr char kStatus[] =
    "Name:\tfedberry-client\nUmask:\t0022\nState:\tS (sleeping)\n"
    "VmPeak:\t  912340 kB\nVmSize:\t  912000 kB\nVmLck:\t       0 kB\n"
    "VmHWM:\t  201232 kB\nVmRSS:\t  187004 kB\nRssAnon:\t  120000 kB\n"
    "Threads:\t5\n";

TEST(ParseProcStatus, ReadsRssAndPeakInBytes) {
  auto memory = ParseProcStatus(kStatus);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->rss_bytes, 187004u * 1024);
  EXPECT_EQ(memory->peak_rss_bytes, 201232u * 1024);
}

TEST(ParseProcStatus, MissingLinesAreAbsentNotZero) {
  // A kernel thread's status has no Vm* lines.
  auto memory = ParseProcStatus("Name:\tkthreadd\nState:\tS (sleeping)\n");
  ASSERT_TRUE(memory.ok());
  EXPECT_FALSE(memory->rss_bytes.has_value());
  EXPECT_FALSE(memory->peak_rss_bytes.has_value());
}

TEST(ParseProcStatus, RefusesMalformedValues) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseProcStatus("VmRSS:\t  lots kB\n").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseProcStatus("VmHWM:\t 12 MB\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseProcStatus("VmRSS:\n").status()));
}

constexpr char kNetDev[] =
    "Inter-|   Receive                                                |  "
    "Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes  "
    "  packets errs drop fifo colls carrier compressed\n"
    "    lo: 5000000   40000    0    0    0     0          0         0  "
    "5000000   40000    0    0    0     0       0          0\n"
    "  eth0: 1200 10 0 0 0 0 0 0 3400 20 0 0 0 0 0 0\n"
    " wlan0: 100 1 0 0 0 0 0 0 50 1 0 0 0 0 0 0\n";

TEST(ParseNetDev, SumsInterfacesButLoopback) {
  auto totals = ParseNetDev(kNetDev);
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->rx_bytes, 1300u);
  EXPECT_EQ(totals->tx_bytes, 3450u);
  EXPECT_EQ(totals->interfaces, 2);
  auto all = ParseNetDev(kNetDev, /*include_loopback=*/true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->rx_bytes, 5001300u);
  EXPECT_EQ(all->interfaces, 3);
}

TEST(ParseNetDev, OnlyLoopbackCountsNoInterface) {
  std::string text(kNetDev);
  text = text.substr(0, text.find("  eth0"));
  auto totals = ParseNetDev(text);
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->interfaces, 0);
}

TEST(ParseNetDev, RefusesMalformedText) {
  EXPECT_TRUE(absl::IsInvalidArgument(ParseNetDev("").status()));
  std::string text(kNetDev);
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseNetDev(text + "  eth1: 1 2 3\n").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseNetDev(text + "eth2 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")
          .status()));
}

TEST(ParseCpuModel, X86ModelName) {
  EXPECT_EQ(ParseCpuModel("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                          "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"),
            "Intel(R) Xeon(R) CPU @ 2.20GHz");
}

TEST(ParseCpuModel, RaspberryPi3BPlus) {
  constexpr char kPi[] =
      "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm crc32 "
      "cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: "
      "0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\nHardware\t: BCM2835\n"
      "Revision\t: a020d3\nSerial\t\t: 00000000abcdef01\n"
      "Model\t\t: Raspberry Pi 3 Model B Plus Rev 1.3\n";
  EXPECT_EQ(ParseCpuModel(kPi),
            "Raspberry Pi 3 Model B Plus Rev 1.3 (Cortex-A53)");
}

TEST(ParseCpuModel, NothingToNameIsAbsent) {
  EXPECT_FALSE(ParseCpuModel("").has_value());
  EXPECT_FALSE(ParseCpuModel("processor\t: 0\n").has_value());
}

TEST(ParseMemTotal, ReadsBytesOrRefuses) {
  auto total = ParseMemTotal("MemTotal:        945512 kB\nMemFree: 1 kB\n");
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(*total, 945512u * 1024);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseMemTotal("MemFree: 1 kB").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseMemTotal("MemTotal: x").status()));
}

TEST(ParseOsPrettyName, UnquotesOrIsAbsent) {
  EXPECT_EQ(
      ParseOsPrettyName("NAME=\"Debian GNU/Linux\"\n"
                        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
      "Debian GNU/Linux 12 (bookworm)");
  EXPECT_FALSE(ParseOsPrettyName("NAME=x\n").has_value());
}

}  // namespace
}  // namespace fedberry::runtime::proc_parsers_test
