// The board's cache of plan model files (TorchScript), one file per SHA-256
// in a folder: fetched once per job, verified by hash whenever it is used,
// so a torn download or a corrupt disk is fetched again, never trained.
// Thread-safety: one user at a time per folder.
#ifndef FEDBERRY_CLIENT_MODEL_FILE_CACHE_H_
#define FEDBERRY_CLIENT_MODEL_FILE_CACHE_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/model_file.h"
#include "runtime/sha256.h"

namespace fedberry::client {

class ModelFileCache {
 public:
  explicit ModelFileCache(std::string dir) : dir_(std::move(dir)) {}

  // Where the file of `sha256` lives once cached.
  std::string PathFor(const std::string& sha256) const;
  // The cached file of `sha256` when it exists and hashes to it; a file
  // that does not is deleted (and logged) so it is fetched again.
  std::optional<runtime::VerifiedModelFile> Find(
      const std::string& sha256) const;

  // Receives one file in pieces: Begin, Append..., Commit. The pieces are
  // hashed as they are written; Commit checks the size and the hash, then
  // moves the file into place (fsync'd); DataLoss when either is wrong (the
  // partial file is removed).
  absl::Status Begin(const std::string& sha256, uint64_t total_bytes);
  absl::Status Append(uint64_t offset, const std::string& data);
  absl::StatusOr<runtime::VerifiedModelFile> Commit();

 private:
  std::string dir_;
  std::string sha256_;
  std::string temp_;
  uint64_t total_ = 0;
  uint64_t written_ = 0;
  std::ofstream out_;
  std::unique_ptr<runtime::Sha256Stream> hash_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_MODEL_FILE_CACHE_H_
