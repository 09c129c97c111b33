// The file system seam of the checkpoint module: every call the write
// protocol makes (create, append, fsync, rename, directory fsync, remove) goes
// through this interface, so tests can fail any one of them or drop unsynced
// data (see checkpoint/testing/fault_injection_file_system.h).
// Modelled on leveldb's Env / rocksdb's FileSystem.
// Thread-safety: implementations are thread-safe; a WritableFile is not.
#ifndef FEDBERRY_BASE_FILE_SYSTEM_H_
#define FEDBERRY_BASE_FILE_SYSTEM_H_

#include <cstdint>
#include <memory>
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

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Creates or truncates `path` for writing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
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

// Writes `data` to `path` through `fs`: create, append, fsync, close.
absl::Status WriteFileSynced(FileSystem& fs, const std::string& path,
                             absl::string_view data);

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_FILE_SYSTEM_H_
