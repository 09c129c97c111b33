#include "runtime/testing/fake_proc_files.h"

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {

absl::StatusOr<std::string> FakeProcFiles::Read(const std::string& path) {
  absl::MutexLock lock(&mu_);
  auto it = files_.find(path);
  if (it == files_.end()) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", path, ": No such file or directory"));
  }
  return it->second;
}

}  // namespace fedberry::runtime
