#include "client/supervisor.h"

#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/criu_signals.h"

extern char** environ;

namespace fedberry::client {

Supervisor::Supervisor(SupervisorOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  // A restored client is criu's child until criu exits; as a subreaper the
  // supervisor inherits it and can wait for it. Without that (qemu-user,
  // for one) CRIU releases are off.
  if (options_.criu != nullptr && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    spdlog::warn(
        "supervisor: cannot become a child subreaper ({}), so a restored "
        "client would not be its child; memory releases use "
        "checkpoint-and-exit instead",
        std::strerror(errno));
    options_.criu = nullptr;
  }
  if (!options_.sleep) {
    options_.sleep = [this](absl::Duration d) {
      absl::MutexLock lock(&mu_);
      // Stop() takes mu_ after setting stop_, which ends this wait early.
      clock_.AwaitWithDeadline(
          mu_,
          absl::Condition(
              +[](std::atomic<bool>* stop) { return stop->load(); }, &stop_),
          clock_.Now() + d);
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
            "supervisor: memory is back after {} ({})",
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

namespace {

int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

pid_t Supervisor::Start() {
  std::vector<char*> args;
  for (const auto& a : options_.argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  std::vector<char*> env;
  for (const auto& e : env_) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  // The child must not inherit a blocked SIGINT/SIGTERM.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, args[0], nullptr, &attr, args.data(), env.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    spdlog::error("supervisor: cannot start {}: {}", options_.argv[0],
                  std::strerror(rc));
    return -1;
  }
  spdlog::info("supervisor: started the client (pid {}){}", pid,
               restarts_.load() ? " again" : "");
  return pid;
}

void Supervisor::RequestDump(pid_t from) {
  if (options_.criu == nullptr) {
    spdlog::warn("supervisor: ignoring a CRIU dump request from pid {}", from);
    return;
  }
  // Kept even when `from` is not yet the followed child: a client started a
  // moment ago can ask before Run() records its pid. The wait that follows
  // that pid takes the request; a request from any other process is
  // dropped there.
  absl::MutexLock lock(&mu_);
  dump_requested_by_ = from;
  wake_.SignalAll();
}

std::optional<int> Supervisor::WaitForExitOrDumpRequest(pid_t pid) {
  // As a subreaper the supervisor also inherits orphans (criu's helpers,
  // restored trees): reap them all, following `pid`.
  const pid_t which = options_.criu != nullptr ? -1 : pid;
  while (true) {
    int status = 0;
    pid_t ended;
    while ((ended = ::waitpid(which, &status, WNOHANG)) > 0) {
      if (ended == pid) return ExitCode(status);
    }
    if (ended < 0 && errno != EINTR) {
      spdlog::error("supervisor: lost track of the client (pid {}): {}", pid,
                    std::strerror(errno));
      return 1;
    }
    absl::MutexLock lock(&mu_);
    if (dump_requested_by_ == pid) {
      dump_requested_by_ = -1;
      return std::nullopt;
    }
    if (dump_requested_by_ != -1) {
      spdlog::warn("supervisor: ignoring a CRIU dump request from pid {}",
                   dump_requested_by_);
      dump_requested_by_ = -1;
    }
    // Woken early by a dump request or Stop(); the timeout notices the exit.
    wake_.WaitWithTimeout(&mu_, absl::Milliseconds(50));
  }
}

bool Supervisor::RestartsLeft() const {
  return options_.max_restarts <= 0 ||
         restarts_.load() + restores_.load() < options_.max_restarts;
}

std::optional<pid_t> Supervisor::DumpAndRestore(pid_t pid) {
  if (!RestartsLeft() || stop_.load()) {
    TellDumpFailed(pid);  // it exits with the release status instead
    return pid;
  }
  spdlog::warn(
      "supervisor: the client (pid {}) checkpointed and asks for a CRIU dump "
      "to free its memory",
      pid);
  if (absl::Status dumped = options_.criu->Dump(pid); !dumped.ok()) {
    spdlog::error("supervisor: {}; telling the client to exit instead",
                  std::string(dumped.message()));
    TellDumpFailed(pid);
    return pid;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child_.store(-1);
  ++dumps_;
  spdlog::warn(
      "supervisor: dumped the client (pid {}) to disk, which ended it and "
      "freed its memory; waiting for memory to come back",
      pid);
  if (!WaitForMemory()) return std::nullopt;
  spdlog::info("supervisor: restoring the client from its CRIU dump");
  absl::StatusOr<pid_t> restored = options_.criu->Restore();
  if (restored.ok()) {
    ++restores_;
    spdlog::info("supervisor: restored the client from its CRIU dump (pid {})",
                 *restored);
    TellRestored(*restored);
    return *restored;
  }
  spdlog::error(
      "supervisor: {}; starting the client afresh (it resumes from its "
      "checkpoint)",
      std::string(restored.status().message()));
  ++restarts_;
  return Start();
}

int Supervisor::Run() {
  if (options_.argv.empty()) return 1;
  env_.clear();
  for (char** e = environ; *e != nullptr; ++e) {
    if (!absl::StartsWith(*e, absl::StrCat(kCriuSupervisorEnv, "="))) {
      env_.push_back(*e);
    }
  }
  if (options_.criu != nullptr) {
    env_.push_back(absl::StrCat(kCriuSupervisorEnv, "=", ::getpid()));
  }
  pid_t pid = Start();
  while (true) {
    if (pid < 0) return 1;
    child_.store(pid);
    if (stop_.load()) ::kill(pid, SIGTERM);  // Stop() raced the start
    std::optional<int> code = WaitForExitOrDumpRequest(pid);
    if (!code) {
      std::optional<pid_t> next = DumpAndRestore(pid);
      if (!next) return 130;
      pid = *next;
      continue;
    }
    child_.store(-1);
    if (*code != options_.release_exit_code || stop_.load()) {
      spdlog::info("supervisor: the client exited with status {}; done", *code);
      return *code;
    }
    if (!RestartsLeft()) {
      spdlog::error(
          "supervisor: the client released its memory again after {} "
          "restarts; giving up",
          restarts_.load() + restores_.load());
      return *code;
    }
    spdlog::warn(
        "supervisor: the client checkpointed and exited to free memory "
        "(status {}); waiting for memory to come back",
        *code);
    if (!WaitForMemory()) return 130;
    ++restarts_;
    pid = Start();
  }
}

}  // namespace fedberry::client
