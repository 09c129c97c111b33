#include "client/supervisor.h"

#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <optional>

extern char** environ;

namespace fedberry::client {

Supervisor::Supervisor(SupervisorOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  if (!options_.sleep) {
    options_.sleep = [this](absl::Duration d) {
      absl::MutexLock lock(&mu_);
      if (!stop_.load()) wake_.WaitWithTimeout(&mu_, d);
    };
  }
}

void Supervisor::Stop(int sig) {
  stop_.store(true);
  const pid_t child = child_.load();
  if (child > 0) ::kill(child, sig);
  absl::MutexLock lock(&mu_);
  wake_.SignalAll();
}

bool Supervisor::WaitForMemory() {
  runtime::Watchdog judge(options_.levels, clock_);
  const absl::Time start = clock_.Now();
  absl::Time last_report = start;
  std::optional<absl::Time> calm_since;
  while (!stop_.load()) {
    const runtime::MemoryReadings r =
        options_.read ? options_.read() : runtime::MemoryReadings{};
    ++memory_polls_;
    const absl::Time now = clock_.Now();
    if (judge.Calm(r)) {
      if (!calm_since) calm_since = now;
      if (now - *calm_since >= options_.levels.resume_hold) {
        spdlog::info(
            "supervisor: memory is back after {} ({}); restarting the client",
            absl::FormatDuration(absl::Trunc(now - start, absl::Seconds(1))),
            r.Summary());
        return true;
      }
    } else {
      calm_since.reset();
    }
    if (now - last_report >= options_.report_every) {
      last_report = now;
      spdlog::warn(
          "supervisor: still waiting for memory after {}: need available >= "
          "{} and PSI some10 <= {}% for {}; now {}",
          absl::FormatDuration(absl::Trunc(now - start, absl::Seconds(1))),
          options_.levels.resume_available.ToString(),
          options_.levels.resume_psi_some10,
          absl::FormatDuration(options_.levels.resume_hold), r.Summary());
    }
    options_.sleep(options_.poll);
  }
  return false;
}

int Supervisor::Run() {
  if (options_.argv.empty()) return 1;
  std::vector<char*> args;
  for (const auto& a : options_.argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  while (true) {
    // The child must not inherit a blocked SIGINT/SIGTERM.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    const int rc =
        posix_spawn(&pid, args[0], nullptr, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      spdlog::error("supervisor: cannot start {}: {}", options_.argv[0],
                    std::strerror(rc));
      return 1;
    }
    child_.store(pid);
    spdlog::info("supervisor: started the client (pid {}){}", pid,
                 restarts_.load() ? " again" : "");
    if (stop_.load()) ::kill(pid, SIGTERM);  // Stop() raced the start
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_.store(-1);
    const int code =
        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != options_.release_exit_code || stop_.load()) {
      spdlog::info("supervisor: the client exited with status {}; done", code);
      return code;
    }
    if (options_.max_restarts > 0 &&
        restarts_.load() >= options_.max_restarts) {
      spdlog::error(
          "supervisor: the client released its memory again after {} "
          "restarts; giving up",
          restarts_.load());
      return code;
    }
    spdlog::warn(
        "supervisor: the client checkpointed and exited to free memory "
        "(status {}); waiting for memory to come back",
        code);
    if (!WaitForMemory()) return 130;
    ++restarts_;
  }
}

}  // namespace fedberry::client
