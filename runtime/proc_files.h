// The seam between fedberry's resource readings and the files they come
// from (/proc/self/stat, /proc/self/status, /proc/net/dev, /proc/cpuinfo,
// /proc/meminfo, /etc/os-release). Readers take a ProcFiles& so tests feed
// them sample file text, including missing and malformed files; the parsers
// of that text live apart, in proc_parsers.h (as oomd keeps its parsers
// apart from reading files).
// Tests use FakeProcFiles (runtime/testing/fake_proc_files.h).
// Thread-safety: ProcFiles::Real() is thread-safe.
#ifndef FEDBERRY_RUNTIME_PROC_FILES_H_
#define FEDBERRY_RUNTIME_PROC_FILES_H_

#include <string>

#include "absl/status/statusor.h"

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

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_PROC_FILES_H_
