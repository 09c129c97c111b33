#include "base/atomic_write.h"

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace fedberry::base {
namespace {

absl::Status Named(const absl::Status& s, const std::string& path) {
  return absl::Status(s.code(),
                      absl::StrCat("cannot write ", path, ": ", s.message()));
}

}  // namespace

absl::Status WriteFileAtomically(FileSystem& fs, const std::string& path,
                                 absl::string_view bytes,
                                 const NewFileOptions& options) {
  const std::string tmp = path + ".tmp";
  absl::Status s = WriteFileSynced(fs, tmp, bytes, options);
  if (s.ok()) s = fs.Rename(tmp, path);
  if (!s.ok()) {
    (void)fs.RemoveFile(tmp);
    return Named(s, path);
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (s = fs.SyncDir(dir); !s.ok()) return Named(s, path);
  return absl::OkStatus();
}

}  // namespace fedberry::base
