#include "base/testing/fault_injection_file_system.h"

#include <unistd.h>

#include "absl/strings/match.h"

namespace fedberry::base::testing {

class FaultInjectionFileSystem::File : public WritableFile {
 public:
  File(FaultInjectionFileSystem& fs, std::unique_ptr<WritableFile> base,
       std::string path)
      : fs_(fs), base_(std::move(base)), path_(std::move(path)) {}

  absl::Status Append(absl::string_view data) override {
    bool short_write = false;
    absl::Status injected = fs_.Check(Op::kAppend, &short_write);
    if (!injected.ok()) {
      if (short_write)
        base_->Append(data.substr(0, data.size() / 2)).IgnoreError();
      return injected;
    }
    return base_->Append(data);
  }
  absl::Status Sync() override {
    if (absl::Status s = fs_.Check(Op::kSync); !s.ok()) return s;
    absl::Status s = base_->Sync();
    if (s.ok()) fs_.MarkSynced(path_);
    return s;
  }
  absl::Status Close() override {
    if (absl::Status s = fs_.Check(Op::kClose); !s.ok()) {
      base_->Close().IgnoreError();
      return s;
    }
    return base_->Close();
  }

 private:
  FaultInjectionFileSystem& fs_;
  std::unique_ptr<WritableFile> base_;
  std::string path_;
};

void FaultInjectionFileSystem::FailNth(Op op, int n, absl::Status status,
                                       bool short_write) {
  absl::MutexLock lock(&mu_);
  faults_[op] = Fault{calls_[op] + n, std::move(status), short_write};
}

int FaultInjectionFileSystem::calls(Op op) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(op);
  return it == calls_.end() ? 0 : it->second;
}

absl::Status FaultInjectionFileSystem::Check(Op op, bool* short_write) {
  absl::MutexLock lock(&mu_);
  const int n = ++calls_[op];
  auto it = faults_.find(op);
  if (it == faults_.end() || it->second.at != n) return absl::OkStatus();
  if (short_write != nullptr) *short_write = it->second.short_write;
  absl::Status s = it->second.status;
  faults_.erase(it);
  return s;
}

void FaultInjectionFileSystem::MarkSynced(const std::string& path) {
  absl::MutexLock lock(&mu_);
  unsynced_.erase(path);
}

void FaultInjectionFileSystem::DropUnsyncedData() {
  absl::MutexLock lock(&mu_);
  for (const auto& path : unsynced_) {
    if (base_.Exists(path)) ::truncate(path.c_str(), 0);
  }
  unsynced_.clear();
}

absl::StatusOr<std::unique_ptr<WritableFile>>
FaultInjectionFileSystem::NewWritableFile(const std::string& path,
                                          const NewFileOptions& options) {
  if (absl::Status s = Check(Op::kCreate); !s.ok()) return s;
  auto base = base_.NewWritableFile(path, options);
  if (!base.ok()) return base.status();
  {
    absl::MutexLock lock(&mu_);
    unsynced_.insert(path);
  }
  return std::unique_ptr<WritableFile>(new File(*this, *std::move(base), path));
}

absl::StatusOr<std::string> FaultInjectionFileSystem::ReadFile(
    const std::string& path) {
  if (absl::Status s = Check(Op::kRead); !s.ok()) return s;
  return base_.ReadFile(path);
}

absl::Status FaultInjectionFileSystem::CreateDir(const std::string& path) {
  if (absl::Status s = Check(Op::kCreateDir); !s.ok()) return s;
  return base_.CreateDir(path);
}

absl::Status FaultInjectionFileSystem::Rename(const std::string& from,
                                              const std::string& to) {
  if (absl::Status s = Check(Op::kRename); !s.ok()) return s;
  absl::Status s = base_.Rename(from, to);
  if (s.ok()) {
    // Unsynced files move with their folder.
    absl::MutexLock lock(&mu_);
    std::set<std::string> moved;
    for (const auto& p : unsynced_) {
      if (p == from) {
        moved.insert(to);
      } else if (absl::StartsWith(p, from + "/")) {
        moved.insert(to + p.substr(from.size()));
      } else {
        moved.insert(p);
      }
    }
    unsynced_ = std::move(moved);
  }
  return s;
}

absl::Status FaultInjectionFileSystem::SyncDir(const std::string& path) {
  if (absl::Status s = Check(Op::kSyncDir); !s.ok()) return s;
  return base_.SyncDir(path);
}

absl::Status FaultInjectionFileSystem::RemoveFile(const std::string& path) {
  if (absl::Status s = Check(Op::kRemove); !s.ok()) return s;
  return base_.RemoveFile(path);
}

absl::Status FaultInjectionFileSystem::RemoveAll(const std::string& path) {
  if (absl::Status s = Check(Op::kRemove); !s.ok()) return s;
  return base_.RemoveAll(path);
}

absl::StatusOr<std::vector<std::string>> FaultInjectionFileSystem::ListDir(
    const std::string& path) {
  return base_.ListDir(path);
}

bool FaultInjectionFileSystem::Exists(const std::string& path) {
  return base_.Exists(path);
}

}  // namespace fedberry::base::testing
