// The signals between fedberry-client and its supervisor
// (`fedberry-client --supervise --watchdog_release=criu`) around a CRIU
// release:
//   1. the supervisor, having found CRIU usable here, puts its pid in the
//      client's environment (kCriuSupervisorEnv);
//   2. when the watchdog releases, the client checkpoints, sends the
//      supervisor SIGUSR1 and waits (RequestCriuDump);
//   3. the supervisor dumps the client to disk with criu, which ends it and
//      frees all its memory, waits for memory to come back, restores it and
//      sends it SIGUSR1 (TellRestored): the restored client, still waiting
//      in RequestCriuDump, trains on from the same batch;
//   4. when the dump fails the supervisor sends SIGUSR2 (TellDumpFailed)
//      and the client exits to free its memory, resuming from its
//      checkpoint when restarted.
// Both signals are blocked in every thread of both processes (main calls
// BlockCriuSignals before any thread starts), so they queue for
// sigtimedwait instead of ending the process.
// Thread-safety: thread-safe.
#ifndef FEDBERRY_CLIENT_CRIU_SIGNALS_H_
#define FEDBERRY_CLIENT_CRIU_SIGNALS_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fedberry::client {

inline constexpr char kCriuSupervisorEnv[] = "FEDBERRY_CRIU_SUPERVISOR";

// Blocks SIGUSR1 and SIGUSR2 in the calling thread (and the threads it
// starts afterwards).
void BlockCriuSignals();

// The supervisor's pid from the environment, if it set one.
std::optional<pid_t> CriuSupervisorFromEnv();

// The client's side: asks `supervisor` for a dump of this process and waits
// for the answer. OK once restored. FailedPrecondition when the supervisor
// is gone or answers that the dump failed; DeadlineExceeded without an
// answer within `wait` of this process's own running time (time spent
// dumped does not count).
absl::Status RequestCriuDump(pid_t supervisor,
                             absl::Duration wait = absl::Minutes(5));

// The supervisor's answers.
void TellRestored(pid_t client);
void TellDumpFailed(pid_t client);

// The supervisor's side: calls `on_request` with the sender's pid for each
// dump request, on its own thread, until destroyed.
class DumpRequestListener {
 public:
  explicit DumpRequestListener(std::function<void(pid_t from)> on_request);
  ~DumpRequestListener();
  DumpRequestListener(const DumpRequestListener&) = delete;
  DumpRequestListener& operator=(const DumpRequestListener&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CRIU_SIGNALS_H_
