#include "runtime/device_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <thread>

#include "runtime/proc_parsers.h"

namespace fedberry::runtime {

DeviceFacts ReadDeviceFacts(ProcFiles& files) {
  DeviceFacts facts;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) facts.hostname = host;
  utsname u{};
  if (uname(&u) == 0) {
    facts.architecture = u.machine;
    facts.kernel = u.release;
  }
  facts.cores = std::thread::hardware_concurrency();
  if (auto text = files.Read("/proc/cpuinfo"); text.ok()) {
    facts.cpu_model = ParseCpuModel(*text);
  }
  if (auto text = files.Read("/proc/meminfo"); text.ok()) {
    if (auto total = ParseMemTotal(*text); total.ok()) {
      facts.total_memory_bytes = *total;
    }
  }
  if (auto text = files.Read("/etc/os-release"); text.ok()) {
    facts.os = ParseOsPrettyName(*text);
  }
  return facts;
}

}  // namespace fedberry::runtime
