// Turns SIGINT/SIGTERM into a callback on an ordinary thread, so shutdown
// code may lock mutexes and call gRPC (neither is allowed in a signal
// handler). Construct it in main() before any other thread starts: it blocks
// the signals in the calling thread, and new threads inherit the mask.
// Thread-safe: the callback runs once, on the watcher thread.
#ifndef FEDBERRY_RUNTIME_SHUTDOWN_SIGNAL_H_
#define FEDBERRY_RUNTIME_SHUTDOWN_SIGNAL_H_

#include <atomic>
#include <functional>
#include <thread>

namespace fedberry {

// Blocks SIGINT/SIGTERM (and the watcher's private wake-up signal) in the
// calling thread. Call first thing in main() when threads start before the
// ShutdownSignal is made (gRPC, samplers): they inherit the mask, so the
// signals reach the watcher's sigwait instead of killing the process.
void BlockShutdownSignals();

class ShutdownSignal {
 public:
  // `on_signal` receives the signal number.
  explicit ShutdownSignal(std::function<void(int)> on_signal);
  ~ShutdownSignal();  // stops the watcher thread

  bool received() const { return received_.load(); }

 private:
  std::function<void(int)> on_signal_;
  std::atomic<bool> received_{false};
  std::thread watcher_;
};

}  // namespace fedberry

#endif  // FEDBERRY_RUNTIME_SHUTDOWN_SIGNAL_H_
