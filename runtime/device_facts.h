// The facts about a board that a client reports once, when it joins:
// hostname, architecture, cores, total memory, CPU model, kernel and OS.
// Files are read through a ProcFiles (/proc/cpuinfo, /proc/meminfo,
// /etc/os-release) so tests use sample files; uname(2) and the core count
// come from the running system. A fact that cannot be read stays empty.
// Thread-safety: ReadDeviceFacts is thread-safe.
#ifndef FEDBERRY_RUNTIME_DEVICE_FACTS_H_
#define FEDBERRY_RUNTIME_DEVICE_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/proc_files.h"

namespace fedberry::runtime {

struct DeviceFacts {
  std::string hostname;
  std::string architecture;  // uname machine, e.g. "aarch64"
  std::string kernel;        // uname release
  std::optional<std::string> cpu_model;
  std::optional<std::string> os;  // PRETTY_NAME of /etc/os-release
  uint32_t cores = 0;             // online cores (0: unknown)
  std::optional<uint64_t> total_memory_bytes;
};

DeviceFacts ReadDeviceFacts(ProcFiles& files);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_DEVICE_FACTS_H_
