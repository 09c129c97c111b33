// Child processes for the simulator: spawn a program with its output sent to
// a log file, poll for exit, and read its peak RSS when it ends.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_SIM_PROCESS_H_
#define FEDBERRY_SIM_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::sim {

struct ExitInfo {
  int code = 0;          // exit code, or 128 + signal
  long max_rss_kib = 0;  // peak resident set size (getrusage ru_maxrss)
};

class Process {
 public:
  // Starts `argv` (argv[0] is the path) with stdout and stderr appended to
  // `log_path`. Internal on spawn failure.
  static absl::StatusOr<Process> Spawn(const std::vector<std::string>& argv,
                                       const std::string& log_path);

  // The exit info once the process ended; nullopt while it runs.
  std::optional<ExitInfo> Poll();
  void Signal(int sig);
  pid_t pid() const { return pid_; }
  const std::optional<ExitInfo>& exit() const { return exit_; }

 private:
  pid_t pid_ = -1;
  std::optional<ExitInfo> exit_;
};

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_PROCESS_H_
