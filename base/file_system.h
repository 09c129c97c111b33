// The file system seam: every call a write protocol makes (create, append,
// fsync, rename, directory fsync, remove) goes through this interface, so
// tests can fail any one of them or drop unsynced data (see
// base/testing/fault_injection_file_system.h).
// Modelled on leveldb's Env / rocksdb's FileSystem.
// Thread-safety: implementations are thread-safe; a WritableFile is not.
#ifndef FEDBERRY_BASE_FILE_SYSTEM_H_
#define FEDBERRY_BASE_FILE_SYSTEM_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::base {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // ResourceExhausted on ENOSPC; Internal (DataLoss for EIO) otherwise.
  virtual absl::Status Append(absl::string_view data) = 0;
  // fsync. A failure means the data may be lost: never retry as if it were
  // fine; abandon the file.
  virtual absl::Status Sync() = 0;
  virtual absl::Status Close() = 0;
};

// How NewWritableFile creates its file.
struct NewFileOptions {
  // Unset: mode 0644 less the umask; an existing file is truncated.
  // Set: exactly these permission bits whatever the umask, and never wider,
  // not even for a moment (a private key's 0600): whatever is at the path (a
  // stale file of any mode, a symlink) is removed and a fresh file created
  // without following symlinks. AlreadyExists if another appears meanwhile.
  std::optional<mode_t> exact_mode;
};

// Options for a file of exactly `mode` (see NewFileOptions::exact_mode).
inline NewFileOptions ExactMode(mode_t mode) { return NewFileOptions{mode}; }

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Creates or truncates `path` for writing, as `options` say.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, const NewFileOptions& options) = 0;
  // NotFound when missing.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;
  // Creates `path` and missing parents; OK when it exists.
  virtual absl::Status CreateDir(const std::string& path) = 0;
  // Atomic rename (POSIX rename(2)); replaces `to`.
  virtual absl::Status Rename(const std::string& from,
                              const std::string& to) = 0;
  // fsync of a directory, making renames and creations in it durable.
  virtual absl::Status SyncDir(const std::string& path) = 0;
  virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Removes a directory and everything in it.
  virtual absl::Status RemoveAll(const std::string& path) = 0;
  // Names (not paths) of the entries of `path`. NotFound when missing.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) = 0;
  virtual bool Exists(const std::string& path) = 0;

  // The process-wide POSIX file system.
  static FileSystem& Default();
};

// Writes `data` to `path` through `fs`: create (as `options` say), append,
// fsync, close.
absl::Status WriteFileSynced(FileSystem& fs, const std::string& path,
                             absl::string_view data,
                             const NewFileOptions& options = {});

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_FILE_SYSTEM_H_
