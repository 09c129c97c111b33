#include "pki/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"

namespace fedberry::pki {
namespace {

using base::ErrnoStatus;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // close(2)'s own result: on some file systems the write error shows here.
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status WriteTemporary(const std::string& tmp, absl::string_view data,
                            mode_t mode) {
  // A stale temporary from a crash may have any mode; O_EXCL on a fresh one
  // guarantees ours, and O_NOFOLLOW refuses a planted symlink.
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "cannot remove the stale", tmp);
  }
  Fd fd(::open(tmp.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot create", tmp);
  // open() applied the umask, which can only narrow; fchmod sets exactly
  // `mode` (e.g. 0644 under umask 077).
  if (::fchmod(fd.get(), mode) != 0) {
    return ErrnoStatus(errno, "cannot chmod", tmp);
  }
  if (absl::Status s = WriteAll(fd.get(), data, tmp); !s.ok()) return s;
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, "cannot fsync", tmp);
  if (fd.Close() != 0) return ErrnoStatus(errno, "cannot close", tmp);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot open", path);
  std::string out;
  char buf[1 << 14];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view data, mode_t mode) {
  const std::string tmp = path + ".tmp";
  absl::Status s = WriteTemporary(tmp, data, mode);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = ErrnoStatus(errno, "cannot rename to", path);
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  const std::string dir = DirOf(path);
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) return ErrnoStatus(errno, "cannot open", dir);
  if (::fsync(dir_fd.get()) != 0) {
    return ErrnoStatus(errno, "cannot fsync the folder", dir);
  }
  return absl::OkStatus();
}

}  // namespace fedberry::pki
