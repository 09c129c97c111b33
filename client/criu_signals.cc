#include "client/criu_signals.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fedberry::client {
namespace {

constexpr int kRequestSignal = SIGUSR1;   // client -> supervisor
constexpr int kRestoredSignal = SIGUSR1;  // supervisor -> client
constexpr int kFailedSignal = SIGUSR2;    // supervisor -> client

sigset_t CriuSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  return set;
}

// One signal of `set`, waiting at most `timeout`; 0 on timeout.
int WaitForSignal(const sigset_t& set, absl::Duration timeout,
                  siginfo_t* info) {
  const timespec ts = absl::ToTimespec(timeout);
  while (true) {
    const int sig = ::sigtimedwait(&set, info, &ts);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
    // EINTR: e.g. the process was just restored from a dump; wait again.
  }
}

}  // namespace

void BlockCriuSignals() {
  const sigset_t set = CriuSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

std::optional<pid_t> CriuSupervisorFromEnv() {
  const char* value = std::getenv(kCriuSupervisorEnv);
  int pid = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &pid) || pid <= 1) {
    return std::nullopt;
  }
  return static_cast<pid_t>(pid);
}

absl::Status RequestCriuDump(pid_t supervisor, absl::Duration wait) {
  BlockCriuSignals();
  const sigset_t set = CriuSignals();
  siginfo_t info;
  while (WaitForSignal(set, absl::ZeroDuration(), &info) > 0) {
    // Drop answers left over from an earlier request.
  }
  if (::kill(supervisor, kRequestSignal) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot signal the supervisor (pid ", supervisor,
                     "): ", std::strerror(errno)));
  }
  // Waited in slices counted, not timed: a dumped process's clock jumps
  // ahead by the time it spent as images on disk.
  constexpr absl::Duration kSlice = absl::Milliseconds(250);
  for (int64_t slices = wait / kSlice; slices >= 0; --slices) {
    const int sig = WaitForSignal(set, kSlice, &info);
    if (sig == kFailedSignal) {
      return absl::FailedPreconditionError(
          "the supervisor could not dump this process (its log says why)");
    }
    if (sig == kRestoredSignal) return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "no answer from the supervisor (pid ", supervisor,
      ") to a CRIU dump request within ", absl::FormatDuration(wait)));
}

void TellRestored(pid_t client) { ::kill(client, kRestoredSignal); }
void TellDumpFailed(pid_t client) { ::kill(client, kFailedSignal); }

DumpRequestListener::DumpRequestListener(
    std::function<void(pid_t from)> on_request) {
  BlockCriuSignals();
  thread_ = std::thread([this, on_request = std::move(on_request)] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, kRequestSignal);
    siginfo_t info;
    while (!stop_.load()) {
      // The timeout only notices stop_.
      if (WaitForSignal(set, absl::Milliseconds(100), &info) > 0) {
        on_request(info.si_pid);
      }
    }
  });
}

DumpRequestListener::~DumpRequestListener() {
  stop_.store(true);
  thread_.join();
}

}  // namespace fedberry::client
