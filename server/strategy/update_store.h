// A round's updates on disk, for the rules that need all of them at once
// (median, trimmed mean, Krum): each update's floating tensors as one row of
// float32 values in a file that is unlinked as soon as it is made (a crash
// leaves nothing behind; the round is redone anyway). Reading goes through
// blocks of coordinates with pread, never a mapping, so the server's
// resident memory is the block buffer (about `buffer_bytes`), not the
// updates: O(model) however many boards report. The page cache may hold
// the file, but that memory is the kernel's to reclaim.
// Integer tensors are not stored: the rules give them the weighted mean.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_SERVER_STRATEGY_UPDATE_STORE_H_
#define FEDBERRY_SERVER_STRATEGY_UPDATE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::server {

class UpdateStore {
 public:
  // A store in folder `dir` (created) for updates of `layout`'s floating
  // tensors. Internal naming the folder when the file cannot be made.
  static absl::StatusOr<std::unique_ptr<UpdateStore>> Create(
      const std::string& dir, const runtime::NamedTensors& layout,
      size_t buffer_bytes = 16 << 20);
  ~UpdateStore();

  // Appends the floating tensors of `update` (of the layout). Internal when
  // the disk refuses (full, failing).
  absl::Status Append(const runtime::NamedTensors& update);

  size_t size() const { return rows_; }
  // Floating coordinates per update.
  int64_t coordinates() const { return coordinates_; }

  // Calls `f(begin, count, block)` for consecutive ranges of coordinates:
  // block[u * count + j] is coordinate begin + j of update u. The ranges
  // are as long as the buffer allows (at least one coordinate). Internal
  // when a read fails.
  absl::Status ForEachBlock(
      const std::function<void(int64_t begin, int64_t count,
                               const std::vector<float>& block)>& f) const;

  // Splits a flat row of coordinates back into the layout's floating
  // tensors (float32 here; the caller casts), integer tensors left null.
  runtime::NamedTensors Unflatten(const std::vector<float>& row) const;
  // Reads update `u` whole.
  absl::StatusOr<std::vector<float>> Row(size_t u) const;

 private:
  UpdateStore(int fd, runtime::NamedTensors layout, int64_t coordinates,
              size_t buffer_bytes);

  int fd_;
  runtime::NamedTensors layout_;
  int64_t coordinates_;
  size_t buffer_bytes_;
  size_t rows_ = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_UPDATE_STORE_H_
