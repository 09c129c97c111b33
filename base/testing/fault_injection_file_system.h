// A FileSystem for tests that wraps a real one and fails chosen calls: the
// Nth create/append/fsync/rename/... returns a given error (ENOSPC as
// ResourceExhausted, EIO as DataLoss, ...), an append may write only part of
// its data first (a short write), and DropUnsyncedData() simulates a power
// cut by emptying every file whose data was never fsynced.
// Modelled on rocksdb's FaultInjectionTestFS. Thread-safe.
#ifndef FEDBERRY_BASE_TESTING_FAULT_INJECTION_FILE_SYSTEM_H_
#define FEDBERRY_BASE_TESTING_FAULT_INJECTION_FILE_SYSTEM_H_

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "base/file_system.h"

namespace fedberry::base::testing {

enum class Op {
  kCreate,
  kAppend,
  kSync,
  kClose,
  kRead,
  kCreateDir,
  kRename,
  kSyncDir,
  kRemove,
};

class FaultInjectionFileSystem : public FileSystem {
 public:
  explicit FaultInjectionFileSystem(FileSystem& base = FileSystem::Default())
      : base_(base) {}

  // The `n`th call (1-based, counted from now) of `op` fails with `status`.
  // With `short_write`, a failing append first writes half its data.
  void FailNth(Op op, int n, absl::Status status, bool short_write = false);
  // Calls of `op` made so far.
  int calls(Op op) const;
  // Empties every file that was written but not fsynced since creation.
  void DropUnsyncedData();

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, const NewFileOptions& options) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status CreateDir(const std::string& path) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status SyncDir(const std::string& path) override;
  absl::Status RemoveFile(const std::string& path) override;
  absl::Status RemoveAll(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) override;
  bool Exists(const std::string& path) override;

 private:
  class File;
  friend class File;
  // Counts a call of `op`; returns the injected failure, if any.
  absl::Status Check(Op op, bool* short_write = nullptr);
  void MarkSynced(const std::string& path);

  FileSystem& base_;
  mutable absl::Mutex mu_;
  std::map<Op, int> calls_ ABSL_GUARDED_BY(mu_);
  struct Fault {
    int at;
    absl::Status status;
    bool short_write;
  };
  std::map<Op, Fault> faults_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> unsynced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::base::testing

#endif  // FEDBERRY_BASE_TESTING_FAULT_INJECTION_FILE_SYSTEM_H_
