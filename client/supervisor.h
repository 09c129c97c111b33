// `fedberry-client --supervise`: runs the client as a child process and
// restarts it after a memory release. When the child exits with
// kMemoryReleaseExitCode (it checkpointed and ended to free its memory),
// the supervisor waits until memory is back — every watched signal on the
// safe side of the watchdog's resume (low-water) levels for the resume hold
// time — and starts it again; the new child resumes from its checkpoint.
// Any other exit ends supervision with the child's status. A long wait is
// logged every report interval with the readings that hold it.
//
// A systemd unit gets the same with Restart=on-failure and
// RestartForceExitStatus=75 (see docs/guide/watchdog.md).
//
// With a CRIU adapter (CRIU usable here) the client may instead ask for a
// dump (client/criu_signals.h): the supervisor dumps it to disk, which ends
// it, waits for memory the same way, restores it and tells it to go on.
// When the dump fails the client is told to exit instead; when the restore
// fails a fresh client starts and resumes from its checkpoint. The
// supervisor makes itself a child subreaper then, so restored clients are
// its children; where it cannot, CRIU releases are off.
// Thread-safety: Run() on one thread; Stop() from any thread.
#ifndef FEDBERRY_CLIENT_SUPERVISOR_H_
#define FEDBERRY_CLIENT_SUPERVISOR_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/criu_adapter.h"
#include "runtime/memory_readings.h"
#include "runtime/watchdog.h"

namespace fedberry::client {

struct SupervisorOptions {
  std::vector<std::string> argv;  // the client; argv[0] is a path
  int release_exit_code = 75;
  // Memory is back when Watchdog::Calm holds for levels.resume_hold.
  runtime::WatchdogOptions levels;
  std::function<runtime::MemoryReadings()> read;
  absl::Duration poll = absl::Seconds(1);
  absl::Duration report_every = absl::Seconds(30);
  int max_restarts = 0;  // restarts plus restores; 0: no limit
  // Set when CRIU works here: dumps on the client's request. Must outlive
  // the supervisor.
  CriuAdapter* criu = nullptr;
  // Waits `d` (default: `d` on the supervisor's clock, cut short by
  // Stop). Tests advance a simulated clock instead.
  std::function<void(absl::Duration)> sleep;
};

class Supervisor {
 public:
  // `clock` must outlive the supervisor.
  Supervisor(SupervisorOptions options, Clock& clock = Clock::Real());

  // Supervises until the child exits with something other than the release
  // status (returns that status, or 128 + signal), Stop() is called while
  // waiting for memory (returns 130), or max_restarts is reached (returns
  // the release status). Returns 1 when the child cannot be started.
  int Run();
  // Forwards `sig` to the running child and ends supervision once it exits.
  void Stop(int sig);
  // A CRIU dump request from process `from` (ignored unless CRIU is on and
  // `from` is the client being followed, even one started so recently that
  // Run() has not recorded its pid yet).
  void RequestDump(pid_t from);

  int restarts() const { return restarts_.load(); }
  int dumps() const { return dumps_.load(); }
  int restores() const { return restores_.load(); }
  int memory_polls() const { return memory_polls_.load(); }

 private:
  pid_t Start();  // -1 when it cannot start
  // The child's exit code, or nullopt when it asked for a dump first.
  std::optional<int> WaitForExitOrDumpRequest(pid_t pid);
  // The process to follow after a dump request: the same client (told to
  // exit), the restored one or a fresh one (-1: cannot start); nullopt when
  // stopped while waiting for memory.
  std::optional<pid_t> DumpAndRestore(pid_t pid);
  bool WaitForMemory();  // false when stopped
  bool RestartsLeft() const;

  SupervisorOptions options_;
  Clock& clock_;
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> child_{-1};
  std::atomic<int> restarts_{0};
  std::atomic<int> dumps_{0};
  std::atomic<int> restores_{0};
  std::vector<std::string> env_;  // the client's environment
  std::atomic<int> memory_polls_{0};
  absl::Mutex mu_;
  absl::CondVar wake_;
  pid_t dump_requested_by_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_SUPERVISOR_H_
