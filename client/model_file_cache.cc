#include "client/model_file_cache.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "runtime/sha256.h"

namespace fedberry::client {
namespace {

namespace fs = std::filesystem;

void SyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string ModelFileCache::PathFor(const std::string& sha256) const {
  return (fs::path(dir_) / absl::StrCat(sha256, ".pt")).string();
}

std::optional<runtime::VerifiedModelFile> ModelFileCache::Find(
    const std::string& sha256) const {
  const std::string path = PathFor(sha256);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  absl::StatusOr<runtime::VerifiedModelFile> file =
      runtime::VerifiedModelFile::Check(path, sha256);
  if (file.ok()) return *std::move(file);
  spdlog::warn("cached model file {} is not fit to use ({}); fetching it again",
               path, std::string(file.status().message()));
  fs::remove(path, ec);
  return std::nullopt;
}

absl::Status ModelFileCache::Begin(const std::string& sha256,
                                   uint64_t total_bytes) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create the model cache folder ", dir_, ": ", ec.message()));
  }
  sha256_ = sha256;
  temp_ = absl::StrCat(PathFor(sha256), ".part");
  total_ = total_bytes;
  written_ = 0;
  out_ = std::ofstream(temp_, std::ios::binary | std::ios::trunc);
  hash_ = std::make_unique<runtime::Sha256Stream>();
  if (!out_) {
    return absl::FailedPreconditionError(absl::StrCat("cannot write ", temp_));
  }
  return absl::OkStatus();
}

absl::Status ModelFileCache::Append(uint64_t offset, const std::string& data) {
  if (offset != written_ || data.size() > total_ - written_) {
    return absl::DataLossError(
        absl::StrCat("model file piece at offset ", offset, " (", data.size(),
                     " bytes) does not follow the ", written_, " of ", total_,
                     " bytes received"));
  }
  out_.write(data.data(), static_cast<std::streamsize>(data.size()));
  hash_->Update(data);
  written_ += data.size();
  if (!out_) return absl::DataLossError(absl::StrCat("cannot write ", temp_));
  return absl::OkStatus();
}

absl::StatusOr<runtime::VerifiedModelFile> ModelFileCache::Commit() {
  if (!hash_) return absl::FailedPreconditionError("Commit without Begin");
  out_.close();
  std::error_code ec;
  auto fail = [&](absl::Status s) {
    fs::remove(temp_, ec);
    return s;
  };
  if (written_ != total_) {
    return fail(absl::DataLossError(absl::StrCat(
        "model file ended after ", written_, " of ", total_, " bytes")));
  }
  if (!out_) {
    return fail(absl::DataLossError(absl::StrCat("cannot write ", temp_)));
  }
  const std::string actual = hash_->Finish();
  if (actual != sha256_) {
    return fail(absl::DataLossError(
        absl::StrCat("received model file hashes to ", actual,
                     "; the plan names ", sha256_)));
  }
  SyncPath(temp_);
  const std::string path = PathFor(sha256_);
  fs::rename(temp_, path, ec);
  if (ec) {
    return fail(absl::FailedPreconditionError(
        absl::StrCat("cannot move ", temp_, " to ", path, ": ", ec.message())));
  }
  SyncPath(dir_);
  return runtime::VerifiedModelFile::Written(path, actual, sha256_);
}

}  // namespace fedberry::client
