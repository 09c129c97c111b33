// An in-memory stand-in for /proc and /etc files: the test side of the
// ProcFiles seam. Thread-safe (a mutex guards its map).
#ifndef FEDBERRY_RUNTIME_TESTING_FAKE_PROC_FILES_H_
#define FEDBERRY_RUNTIME_TESTING_FAKE_PROC_FILES_H_

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "runtime/proc_files.h"

namespace fedberry::runtime {

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

#endif  // FEDBERRY_RUNTIME_TESTING_FAKE_PROC_FILES_H_
