#include "runtime/model_file.h"

#include "absl/strings/str_cat.h"
#include "runtime/sha256.h"

namespace fedberry::runtime {

absl::StatusOr<VerifiedModelFile> VerifiedModelFile::Check(
    std::string path, const std::string& sha256) {
  absl::StatusOr<std::string> actual = Sha256OfFile(path);
  if (!actual.ok()) return actual.status();
  return Written(std::move(path), *actual, sha256);
}

absl::StatusOr<VerifiedModelFile> VerifiedModelFile::Written(
    std::string path, const std::string& computed,
    const std::string& expected) {
  if (computed != expected) {
    return absl::DataLossError(absl::StrCat("model file ", path,
                                            " has SHA-256 ", computed,
                                            "; the plan names ", expected));
  }
  return VerifiedModelFile(std::move(path), computed, nullptr);
}

VerifiedModelFile VerifiedModelFile::InMemory(
    std::string path, std::shared_ptr<const std::string> bytes) {
  std::string sha256 = Sha256Hex(*bytes);
  return VerifiedModelFile(std::move(path), std::move(sha256),
                           std::move(bytes));
}

}  // namespace fedberry::runtime
