// The seam between fedberry's resource readings and the files they come
// from (/proc/self/stat, /proc/self/status, /proc/net/dev, /proc/cpuinfo,
// /proc/meminfo, /etc/os-release). Readers take a ProcFiles& so tests feed
// them sample file text, including missing and malformed files; the parsers
// of that text live apart, in proc_parsers.h (as oomd keeps its parsers
// apart from reading files).
// Thread-safety: ProcFiles::Real() is thread-safe; FakeProcFiles is
// thread-safe too (a mutex guards its map).
#ifndef FEDBERRY_RUNTIME_PROC_FILES_H_
#define FEDBERRY_RUNTIME_PROC_FILES_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace fedberry::runtime {

class ProcFiles {
 public:
  virtual ~ProcFiles() = default;
  // The whole text of `path`. NotFound when the file does not exist,
  // PermissionDenied when it cannot be opened, DataLoss on a read error.
  virtual absl::StatusOr<std::string> Read(const std::string& path) = 0;
  // Reads the real files of this machine.
  static ProcFiles& Real();
};

// An in-memory stand-in: Read returns what Set stored, NotFound otherwise.
class FakeProcFiles : public ProcFiles {
 public:
  void Set(const std::string& path, std::string text) {
    absl::MutexLock lock(&mu_);
    files_[path] = std::move(text);
  }
  void Remove(const std::string& path) {
    absl::MutexLock lock(&mu_);
    files_.erase(path);
  }
  absl::StatusOr<std::string> Read(const std::string& path) override;

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> files_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_PROC_FILES_H_
