// LibTorch serialization to and from bytes, so the checkpoint store (not
// torch::save) owns how bytes reach the disk, and LibTorch's exceptions
// become statuses at this one edge.
// Thread-safety: pure functions; the callbacks decide what is shared.
#ifndef FEDBERRY_CHECKPOINT_TORCH_ARCHIVE_H_
#define FEDBERRY_CHECKPOINT_TORCH_ARCHIVE_H_

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace fedberry::checkpoint {

// Runs `write` on a fresh archive and returns its bytes. Internal when
// LibTorch throws.
absl::StatusOr<std::string> ArchiveToBytes(
    const std::function<void(torch::serialize::OutputArchive&)>& write);

// Opens `bytes` as an archive and runs `read` on it. DataLoss naming `what`
// when the bytes are not an archive or `read` throws (missing key, wrong
// shape).
absl::Status ArchiveFromBytes(
    const std::string& bytes, const std::string& what,
    const std::function<void(torch::serialize::InputArchive&)>& read);

// The state of LibTorch's default CPU generator, and its restore.
absl::StatusOr<std::string> CpuRngStateToBytes();
absl::Status RestoreCpuRngState(const std::string& bytes);

}  // namespace fedberry::checkpoint

#endif  // FEDBERRY_CHECKPOINT_TORCH_ARCHIVE_H_
