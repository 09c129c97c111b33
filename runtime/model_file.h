// A plan's model file whose contents were checked against a SHA-256, so that
// whoever binds the plan loads it without hashing it again (hashing a model
// of hundreds of MB takes seconds on a board). Only the factories below make
// one, and each of them compares a hash it computed with the one expected.
// Thread-safety: immutable once made.
#ifndef FEDBERRY_RUNTIME_MODEL_FILE_H_
#define FEDBERRY_RUNTIME_MODEL_FILE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace fedberry::runtime {

class VerifiedModelFile {
 public:
  // Hashes the file at `path`. NotFound when it cannot be read; DataLoss
  // naming both hashes when it is not `sha256`.
  static absl::StatusOr<VerifiedModelFile> Check(std::string path,
                                                 const std::string& sha256);
  // A file whose hash its writer computed as it wrote it (a download):
  // DataLoss naming both hashes when `computed` is not `expected`.
  static absl::StatusOr<VerifiedModelFile> Written(std::string path,
                                                   const std::string& computed,
                                                   const std::string& expected);
  // Bytes in memory (a server's copy of the file it serves), hashed here;
  // `path` names them in messages. `bytes` must not be null.
  static VerifiedModelFile InMemory(std::string path,
                                    std::shared_ptr<const std::string> bytes);

  const std::string& path() const { return path_; }
  const std::string& sha256() const { return sha256_; }
  // The file's bytes when they are held in memory, else null.
  const std::shared_ptr<const std::string>& bytes() const { return bytes_; }

 private:
  VerifiedModelFile(std::string path, std::string sha256,
                    std::shared_ptr<const std::string> bytes)
      : path_(std::move(path)),
        sha256_(std::move(sha256)),
        bytes_(std::move(bytes)) {}

  std::string path_;
  std::string sha256_;
  std::shared_ptr<const std::string> bytes_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_MODEL_FILE_H_
