// Pure parsers of the text of Linux /proc files (and /etc/os-release) that
// fedberry's resource readings need. They read nothing themselves: callers
// pass the file's text (from a ProcFiles), so every parser is tested on
// sample files, including truncated and malformed ones.
// Thread-safety: all functions are pure and thread-safe.
#ifndef FEDBERRY_RUNTIME_PROC_PARSERS_H_
#define FEDBERRY_RUNTIME_PROC_PARSERS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::runtime {

// CPU time of a process from /proc/<pid>/stat, in clock ticks.
struct ProcessCpuTicks {
  uint64_t user = 0;    // utime, field 14
  uint64_t system = 0;  // stime, field 15
};
// InvalidArgument when the text is not a stat line (no "(comm)", too few
// fields, or non-numeric times).
absl::StatusOr<ProcessCpuTicks> ParseProcStat(absl::string_view text);

// Memory of a process from /proc/<pid>/status. A line that is missing (a
// kernel thread has no Vm* lines) leaves its field empty.
struct ProcessMemory {
  std::optional<uint64_t> rss_bytes;       // VmRSS
  std::optional<uint64_t> peak_rss_bytes;  // VmHWM
};
// InvalidArgument when a VmRSS/VmHWM line is present but malformed.
absl::StatusOr<ProcessMemory> ParseProcStatus(absl::string_view text);

// Byte counters summed over the interfaces of /proc/net/dev.
struct NetDevTotals {
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
  int interfaces = 0;  // interfaces counted
};
// Sums every interface except loopback ("lo") unless `include_loopback`.
// InvalidArgument when the header or an interface line is malformed.
absl::StatusOr<NetDevTotals> ParseNetDev(absl::string_view text,
                                         bool include_loopback = false);

// A readable CPU name from /proc/cpuinfo: "model name" (x86 and some ARM
// kernels), else the board's "Model" line plus the core named from its
// "CPU part" (e.g. "Raspberry Pi 3 Model B Plus Rev 1.3 (Cortex-A53)").
// nullopt when the text names nothing.
std::optional<std::string> ParseCpuModel(absl::string_view text);

// MemTotal of /proc/meminfo in bytes. InvalidArgument when missing or
// malformed.
absl::StatusOr<uint64_t> ParseMemTotal(absl::string_view text);

// PRETTY_NAME of /etc/os-release, unquoted. nullopt when missing.
std::optional<std::string> ParseOsPrettyName(absl::string_view text);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_PROC_PARSERS_H_
