// The memory-pressure readings the watchdog acts on: PSI
// (/proc/pressure/memory), MemAvailable and MemTotal (/proc/meminfo), this
// process's RSS (/proc/self/status) and its cgroup's memory usage and limit
// (cgroup v2 memory.current/memory.max, v1 memory.usage_in_bytes/
// memory.limit_in_bytes, found through /proc/self/cgroup). Parsers are pure
// functions of file text; MemoryReader reads through a ProcFiles so tests
// feed it sample files, including missing and malformed ones.
//
// A reading that cannot be taken is left empty (never 0) and the reason is
// kept in `problems`, so a board without PSI still watches MemAvailable.
// Thread-safety: parsers are pure; MemoryReader::Read is thread-safe when its
// ProcFiles is.
#ifndef FEDBERRY_RUNTIME_MEMORY_READINGS_H_
#define FEDBERRY_RUNTIME_MEMORY_READINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/proc_files.h"

namespace fedberry::runtime {

// One line ("some" or "full") of a PSI file: percentages of wall time in
// which tasks stalled on memory, over 10, 60 and 300 s, and the total stall
// in microseconds.
struct PsiLine {
  double avg10 = 0;
  double avg60 = 0;
  double avg300 = 0;
  uint64_t total_us = 0;
};
struct Psi {
  PsiLine some;
  std::optional<PsiLine> full;  // absent in the cpu file of old kernels
};
// InvalidArgument when the "some" line is missing or a line is malformed.
absl::StatusOr<Psi> ParsePsi(absl::string_view text);

// MemTotal and MemAvailable of /proc/meminfo in bytes. InvalidArgument when
// either is missing (kernels before 3.14 have no MemAvailable) or malformed.
struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};
absl::StatusOr<MemInfo> ParseMemInfo(absl::string_view text);

// Where this process's memory cgroup is, from /proc/self/cgroup: the v1
// "memory" controller's path when there is one, else the v2 ("0::") path.
struct CgroupPath {
  enum class Version { kV1, kV2 };
  Version version = Version::kV2;
  std::string path;  // relative to the hierarchy's mount, e.g. "/user.slice"
};
// NotFound when no line names a memory hierarchy; InvalidArgument when the
// text is malformed.
absl::StatusOr<CgroupPath> ParseProcSelfCgroup(absl::string_view text);

// A cgroup limit file: a byte count, or "max" (v2) / a value at or above
// 2^62 (v1's "no limit", e.g. 9223372036854771712) as nullopt.
// InvalidArgument when the text is neither.
absl::StatusOr<std::optional<uint64_t>> ParseCgroupLimit(
    absl::string_view text);
// A cgroup usage file: a byte count. InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseCgroupUsage(absl::string_view text);

// Everything the watchdog looks at, as of one read.
struct MemoryReadings {
  std::optional<Psi> psi;
  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint64_t> mem_available_bytes;
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> cgroup_usage_bytes;
  std::optional<uint64_t> cgroup_limit_bytes;  // absent: no limit (or unknown)
  std::vector<std::string> problems;           // why readings are missing

  // Share of memory available, 0..1: MemAvailable / MemTotal, or the
  // cgroup's headroom (limit - usage) / limit when that is smaller.
  std::optional<double> available_fraction() const;
  // Bytes available: the smaller of MemAvailable and the cgroup headroom.
  std::optional<uint64_t> available_bytes() const;
  // One line for logs, e.g. "psi some10=12.3% full10=0.0%, available
  // 120 MiB (11.7%), rss 210 MiB, cgroup 300/400 MiB".
  std::string Summary() const;
};

struct MemoryReaderOptions {
  std::string pressure_path = "/proc/pressure/memory";
  std::string meminfo_path = "/proc/meminfo";
  std::string status_path = "/proc/self/status";
  std::string self_cgroup_path = "/proc/self/cgroup";
  std::string cgroup_v1_root = "/sys/fs/cgroup/memory";
  std::string cgroup_v2_root = "/sys/fs/cgroup";
};

class MemoryReader {
 public:
  explicit MemoryReader(ProcFiles& files, MemoryReaderOptions options = {})
      : files_(files), options_(std::move(options)) {}
  // Takes every reading it can; never fails as a whole.
  MemoryReadings Read();

 private:
  void ReadCgroup(MemoryReadings& out);

  ProcFiles& files_;
  const MemoryReaderOptions options_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_MEMORY_READINGS_H_
