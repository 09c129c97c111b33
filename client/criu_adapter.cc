#include "client/criu_adapter.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fedberry::client {
namespace {

namespace fs = std::filesystem;

constexpr char kPidFile[] = "restored.pid";

// The last `n` non-empty lines of `text`.
std::string Tail(const std::string& text, size_t n) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - n);
  return absl::StrJoin(lines, " | ");
}

// The first line that names an error (skipping criu's reports of its own
// helper processes' exit), else the tail.
std::string Reason(const std::string& output) {
  for (absl::string_view line :
       absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    if ((absl::StrContains(line, "Error") ||
         absl::StrContains(line, "error")) &&
        !absl::StrContains(line, "exited, status=")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return output.empty() ? "no output" : Tail(output, 2);
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Only async-signal-safe calls after fork: the message is built first.
  const std::string cannot_run = absl::StrCat("cannot run ", argv[0], "\n");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // criu gets default signals
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execvp(args[0], args.data());
    (void)!::write(2, cannot_run.data(), cannot_run.size());
    ::_exit(127);
  }
  ::close(out[1]);
  CommandResult result;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(out[0], buf, sizeof(buf));
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace

CommandRunner RealCommandRunner() { return RunCommand; }

absl::StatusOr<bool> OnMemoryFileSystem(const std::string& path) {
  fs::path p = path.empty() ? fs::path(".") : fs::path(path);
  std::error_code ec;
  p = fs::absolute(p, ec);
  while (!p.empty() && !fs::exists(p, ec) && p != p.root_path()) {
    p = p.parent_path();
  }
  struct statfs st;
  if (::statfs(p.c_str(), &st) != 0) {
    return absl::InternalError(
        absl::StrCat("statfs ", p.string(), ": ", std::strerror(errno)));
  }
  return st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC;
}

namespace {

// criu opens a relative --pidfile under its work folder (the images
// folder), not the caller's: with a relative images folder, the first
// restore on a board wrote its whole tree back and then failed on "Can't
// write pidfile". Absolute paths mean the same to both.
CriuOptions WithAbsoluteImagesDir(CriuOptions options) {
  if (options.images_dir.empty()) return options;
  std::error_code ec;
  const fs::path absolute = fs::absolute(options.images_dir, ec);
  if (!ec) options.images_dir = absolute.lexically_normal().string();
  return options;
}

}  // namespace

CriuAdapter::CriuAdapter(CriuOptions options, CommandRunner runner)
    : options_(WithAbsoluteImagesDir(std::move(options))),
      runner_(std::move(runner)) {}

std::vector<std::string> CriuAdapter::CheckCommand() const {
  return {options_.criu, "check"};
}

std::vector<std::string> CriuAdapter::DumpCommand(pid_t pid) const {
  std::vector<std::string> argv = {
      options_.criu,       "dump",         "--tree",
      std::to_string(pid), "--images-dir", options_.images_dir,
      "--log-file",        "dump.log",     "--tcp-established",
      "--file-locks"};
  if (options_.shell_job) argv.push_back("--shell-job");
  return argv;
}

std::vector<std::string> CriuAdapter::RestoreCommand() const {
  std::vector<std::string> argv = {
      options_.criu,
      "restore",
      "--images-dir",
      options_.images_dir,
      "--log-file",
      "restore.log",
      "--tcp-established",
      "--file-locks",
      "--restore-detached",
      "--pidfile",
      (fs::path(options_.images_dir) / kPidFile).string()};
  if (options_.shell_job) argv.push_back("--shell-job");
  return argv;
}

absl::Status CriuAdapter::Run(const std::vector<std::string>& argv,
                              const char* what) {
  absl::StatusOr<CommandResult> r = runner_(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code == 127 && absl::StrContains(r->output, "cannot run")) {
    return absl::FailedPreconditionError(absl::StrCat(
        options_.criu, " is not installed (apt-get install criu)"));
  }
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "criu ", what, " failed (exit ", r->exit_code, "): ", Reason(r->output),
        options_.images_dir.empty()
            ? ""
            : absl::StrCat("; log in ", options_.images_dir, "/", what,
                           ".log")));
  }
  return absl::OkStatus();
}

absl::Status CriuAdapter::Check() {
  absl::StatusOr<CommandResult> r = runner_(CheckCommand());
  if (!r.ok()) return absl::FailedPreconditionError(r.status().message());
  if (r->exit_code == 127 && absl::StrContains(r->output, "cannot run")) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.criu, " is not installed"));
  }
  if (r->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "`criu check` failed (exit ", r->exit_code, "): ", Reason(r->output)));
  }
  return absl::OkStatus();
}

absl::Status CriuAdapter::Dump(pid_t pid) {
  if (options_.images_dir.empty()) {
    return absl::FailedPreconditionError("no CRIU images folder is set");
  }
  absl::StatusOr<bool> in_memory = OnMemoryFileSystem(options_.images_dir);
  if (!in_memory.ok()) return in_memory.status();
  if (*in_memory) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CRIU images folder ", options_.images_dir,
        " is on tmpfs: a dump there keeps the memory in RAM and frees "
        "nothing; choose a folder on disk"));
  }
  std::error_code ec;
  fs::create_directories(options_.images_dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot create ", options_.images_dir, ": ", ec.message()));
  }
  fs::remove(fs::path(options_.images_dir) / kPidFile, ec);
  return Run(DumpCommand(pid), "dump");
}

absl::StatusOr<pid_t> CriuAdapter::Restore() {
  if (absl::Status s = Run(RestoreCommand(), "restore"); !s.ok()) return s;
  const fs::path pidfile = fs::path(options_.images_dir) / kPidFile;
  std::ifstream in(pidfile);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  int pid = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid) || pid <= 0) {
    return absl::InternalError(absl::StrCat(
        "criu restore wrote no usable pid file at ", pidfile.string()));
  }
  return static_cast<pid_t>(pid);
}

}  // namespace fedberry::client
