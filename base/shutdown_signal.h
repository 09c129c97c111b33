// Turns SIGINT/SIGTERM into a callback on an ordinary thread, so shutdown
// code may lock mutexes and call gRPC (neither is allowed in a signal
// handler). Construct it in main() before any other thread starts: it blocks
// the signals in the calling thread, and new threads inherit the mask.
// Thread-safe: the callback runs once, on the watcher thread.
#ifndef FEDBERRY_BASE_SHUTDOWN_SIGNAL_H_
#define FEDBERRY_BASE_SHUTDOWN_SIGNAL_H_

#include <atomic>
#include <functional>
#include <thread>

namespace fedberry {

// Blocks SIGINT/SIGTERM/SIGHUP (and the watcher's private wake-up signal) in
// the calling thread. Call first thing in main() when threads start before the
// ShutdownSignal is made (gRPC, samplers): they inherit the mask, so the
// signals reach the watcher's sigwait instead of killing the process.
void BlockShutdownSignals();

class ShutdownSignal {
 public:
  // `on_signal` receives the signal number. `on_hangup`, when given, runs
  // on each SIGHUP (reload configuration, the daemon convention); without
  // it SIGHUP stops the process like SIGTERM, as it would by default.
  explicit ShutdownSignal(std::function<void(int)> on_signal,
                          std::function<void()> on_hangup = nullptr);
  ~ShutdownSignal();  // stops the watcher thread

  bool received() const { return received_.load(); }

 private:
  std::function<void(int)> on_signal_;
  std::function<void()> on_hangup_;
  std::atomic<bool> received_{false};
  std::thread watcher_;
};

}  // namespace fedberry

#endif  // FEDBERRY_BASE_SHUTDOWN_SIGNAL_H_
