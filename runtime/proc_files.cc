#include "runtime/proc_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {
namespace {

class RealProcFiles : public ProcFiles {
 public:
  absl::StatusOr<std::string> Read(const std::string& path) override {
    // /proc files report size 0, so read until EOF; plain read(2) keeps a
    // sample cheap (no stream locale or buffer setup).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      const std::string why =
          absl::StrCat("cannot open ", path, ": ", std::strerror(err));
      if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(why);
      if (err == EACCES || err == EPERM) {
        return absl::PermissionDeniedError(why);
      }
      return absl::UnavailableError(why);
    }
    std::string text;
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        return absl::DataLossError(
            absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
      }
      text.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return text;
  }
};

}  // namespace

ProcFiles& ProcFiles::Real() {
  static RealProcFiles* files = new RealProcFiles;
  return *files;
}

}  // namespace fedberry::runtime
