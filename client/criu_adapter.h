// The optional CRIU backend of the watchdog's release path: dump a
// training process to disk (which ends it and frees all its memory) and
// restore it later. CRIU needs kernel features and capabilities that many
// boards and containers lack, so it is detected at run time with
// `criu check`; where that fails the client says so in one line and uses
// its own checkpoint-and-exit path.
//
// A dump to tmpfs frees nothing (the images stay in RAM), so Dump refuses a
// tmpfs images folder.
//
// Commands run through a CommandRunner so tests check the command lines and
// the failure handling with a fake `criu` on PATH.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_CLIENT_CRIU_ADAPTER_H_
#define FEDBERRY_CLIENT_CRIU_ADAPTER_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::client {

struct CommandResult {
  int exit_code = 0;   // or 128 + signal
  std::string output;  // stdout and stderr, interleaved
};
// Runs argv (argv[0] looked up on PATH) and waits for it. Internal when it
// cannot be started at all.
using CommandRunner = std::function<absl::StatusOr<CommandResult>(
    const std::vector<std::string>& argv)>;
CommandRunner RealCommandRunner();

// Whether `path` (or its nearest existing parent) is on tmpfs/ramfs.
absl::StatusOr<bool> OnMemoryFileSystem(const std::string& path);

struct CriuOptions {
  std::string criu = "criu";  // the executable, looked up on PATH
  std::string images_dir;     // where dumps go: must be on disk
  // The supervised client shares the supervisor's terminal and session.
  bool shell_job = true;
};

class CriuAdapter {
 public:
  explicit CriuAdapter(CriuOptions options,
                       CommandRunner runner = RealCommandRunner());

  std::vector<std::string> CheckCommand() const;
  std::vector<std::string> DumpCommand(pid_t pid) const;
  std::vector<std::string> RestoreCommand() const;

  // OK when `criu check` passes. FailedPrecondition otherwise, with the
  // reason (criu missing, or its first error line).
  absl::Status Check();
  // Dumps the process tree of `pid` into images_dir; the process ends.
  // FailedPrecondition when images_dir is on tmpfs or not set; Internal
  // when criu fails (with the end of its output and its log's path).
  absl::Status Dump(pid_t pid);
  // Restores the dumped tree detached and returns its root's pid. Internal
  // when criu fails or writes no pid file.
  absl::StatusOr<pid_t> Restore();

 private:
  absl::Status Run(const std::vector<std::string>& argv, const char* what);

  const CriuOptions options_;
  CommandRunner runner_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CRIU_ADAPTER_H_
