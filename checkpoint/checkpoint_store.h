// Crash-safe checkpoints in a folder: each checkpoint is a directory
// `ckpt-<seq>` of files plus a MANIFEST (format version, each file's size and
// XXH3-64 checksum, and the manifest's own checksum). The manifest is written
// last and is the commit point.
//
// Save: write every file into `ckpt-<seq>.tmp/` and fsync it, write the
// MANIFEST and fsync it, fsync the folder, rename it to `ckpt-<seq>`, fsync
// the root; then replace the `LATEST` pointer atomically (temp file, fsync,
// rename, fsync root); only then delete checkpoints beyond the newest `keep`.
// Any failure abandons the new checkpoint (a failed fsync is never retried:
// the kernel may already have dropped the pages) and leaves the previous one
// the newest. A crash at any instant leaves the previous checkpoint loadable.
//
// Load: verifies every checksum; a torn, truncated or corrupt checkpoint is
// reported by name and skipped for the newest valid one.
// Thread-safety: not thread-safe; one store per folder and process.
#ifndef FEDBERRY_CHECKPOINT_CHECKPOINT_STORE_H_
#define FEDBERRY_CHECKPOINT_CHECKPOINT_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/file_system.h"

namespace fedberry::checkpoint {

inline constexpr int kFormatVersion = 1;

struct CheckpointFile {
  std::string name;  // a plain file name, no '/'
  std::string bytes;
};

struct ManifestEntry {
  std::string name;
  uint64_t size = 0;
  std::string xxh3;  // 16 hex digits
};

struct CheckpointInfo {
  std::string name;  // e.g. "ckpt-00000012"
  uint64_t seq = 0;
  uint64_t bytes = 0;
  bool latest = false;     // LATEST points here
  absl::Status integrity;  // OK, or what is wrong with it
  std::vector<ManifestEntry> files;
};

struct LoadedCheckpoint {
  std::string name;
  uint64_t seq = 0;
  std::map<std::string, std::string> files;
  // Newer checkpoints that were skipped, each with what is wrong.
  std::vector<absl::Status> skipped;
};

struct StoreOptions {
  int keep = 3;  // newest checkpoints kept (>= 1)
};

class CheckpointStore {
 public:
  CheckpointStore(std::string root,
                  base::FileSystem& fs = base::FileSystem::Default(),
                  StoreOptions options = {});

  const std::string& root() const { return root_; }

  // Writes a checkpoint holding `files` and makes it the newest; returns its
  // name. ResourceExhausted (disk full), PermissionDenied (read-only folder),
  // DataLoss/Internal (I/O, fsync, rename failures) from the failing step,
  // with the step named; InvalidArgument for a bad file name.
  absl::StatusOr<std::string> Save(const std::vector<CheckpointFile>& files);

  // The newest checkpoint whose every checksum verifies. NotFound when there
  // is no checkpoint; DataLoss when there are some but none verifies (each
  // is named in the message, with why).
  absl::StatusOr<LoadedCheckpoint> LoadLatest();

  // One checkpoint by name, verified. NotFound, DataLoss (checksum, size,
  // missing file), FailedPrecondition (unknown format version).
  absl::StatusOr<LoadedCheckpoint> Load(const std::string& name);

  // Every checkpoint, newest first, each verified.
  absl::StatusOr<std::vector<CheckpointInfo>> List();

 private:
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> Scan(
      bool include_tmp);
  absl::Status WriteCheckpoint(const std::string& tmp, const std::string& dir,
                               const std::vector<CheckpointFile>& files);
  absl::Status PointLatestTo(const std::string& name);
  void Retain(uint64_t newest);
  std::string Path(const std::string& name) const;

  std::string root_;
  base::FileSystem& fs_;
  StoreOptions options_;
};

// XXH3-64 of `data` as 16 hex digits.
std::string Checksum(absl::string_view data);

}  // namespace fedberry::checkpoint

#endif  // FEDBERRY_CHECKPOINT_CHECKPOINT_STORE_H_
