#include "sim/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstring>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace fedberry::sim {

absl::StatusOr<Process> Process::Spawn(const std::vector<std::string>& argv,
                                       const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // Children must not inherit the simulator's blocked SIGINT/SIGTERM.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Process p;
  int rc = posix_spawn(&p.pid_, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  return p;
}

std::optional<ExitInfo> Process::Poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  rusage usage{};
  pid_t r = wait4(pid_, &status, WNOHANG, &usage);
  if (r != pid_) return std::nullopt;
  ExitInfo info;
  info.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  info.max_rss_kib = usage.ru_maxrss;
  exit_ = info;
  return exit_;
}

void Process::Signal(int sig) {
  if (!exit_ && pid_ > 0) kill(pid_, sig);
}

}  // namespace fedberry::sim
