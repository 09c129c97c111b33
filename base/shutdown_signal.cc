#include "base/shutdown_signal.h"

#include <pthread.h>
#include <signal.h>

namespace fedberry {
namespace {
sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR2);  // private: wakes the watcher at destruction
  return set;
}
}  // namespace

void BlockShutdownSignals() {
  sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ShutdownSignal::ShutdownSignal(std::function<void(int)> on_signal,
                               std::function<void()> on_hangup)
    : on_signal_(std::move(on_signal)), on_hangup_(std::move(on_hangup)) {
  BlockShutdownSignals();
  const sigset_t set = ShutdownSet();
  watcher_ = std::thread([this, set] {
    int sig = 0;
    while (sigwait(&set, &sig) == 0) {
      if (sig == SIGUSR2) return;
      if (sig == SIGHUP && on_hangup_) {
        on_hangup_();
        continue;
      }
      if (!received_.exchange(true)) on_signal_(sig);
    }
  });
}

ShutdownSignal::~ShutdownSignal() {
  pthread_kill(watcher_.native_handle(), SIGUSR2);
  watcher_.join();
}

}  // namespace fedberry
