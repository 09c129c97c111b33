#include "server/strategy/update_store.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace fedberry::server {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// pwrite/pread of all `n` bytes at `offset`, through short counts and EINTR.
bool WriteAll(int fd, const char* p, size_t n, off_t offset) {
  while (n > 0) {
    const ssize_t done = ::pwrite(fd, p, n, offset);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    p += done;
    n -= static_cast<size_t>(done);
    offset += done;
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n, off_t offset) {
  while (n > 0) {
    const ssize_t done = ::pread(fd, p, n, offset);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) {
      if (done == 0) errno = EIO;  // the file is shorter than its rows
      return false;
    }
    p += done;
    n -= static_cast<size_t>(done);
    offset += done;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<UpdateStore>> UpdateStore::Create(
    const std::string& dir, const runtime::NamedTensors& layout,
    size_t buffer_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot create the update store folder ", dir, ": ", ec.message()));
  }
  std::string path = absl::StrCat(dir, "/updates-XXXXXX");
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0)
    return Errno(absl::StrCat("cannot make an update store in ", dir));
  ::unlink(path.c_str());  // gone with the descriptor, crash or not
  int64_t coordinates = 0;
  for (const auto& t : layout) {
    if (t.tensor.is_floating_point()) coordinates += t.tensor.numel();
  }
  return std::unique_ptr<UpdateStore>(
      new UpdateStore(fd, layout, coordinates, buffer_bytes));
}

UpdateStore::UpdateStore(int fd, runtime::NamedTensors layout,
                         int64_t coordinates, size_t buffer_bytes)
    : fd_(fd),
      layout_(std::move(layout)),
      coordinates_(coordinates),
      buffer_bytes_(std::max<size_t>(buffer_bytes, sizeof(float))) {}

UpdateStore::~UpdateStore() { ::close(fd_); }

absl::Status UpdateStore::Append(const runtime::NamedTensors& update) {
  const off_t row_bytes = static_cast<off_t>(coordinates_) * sizeof(float);
  off_t offset = static_cast<off_t>(rows_) * row_bytes;
  for (size_t i = 0; i < update.size() && i < layout_.size(); ++i) {
    if (!layout_[i].tensor.is_floating_point()) continue;
    const at::Tensor t =
        update[i].tensor.to(at::kFloat).contiguous().view({-1});
    const size_t bytes = static_cast<size_t>(t.numel()) * sizeof(float);
    if (!WriteAll(fd_, static_cast<const char*>(t.data_ptr()), bytes, offset)) {
      return Errno("cannot write an update to the update store");
    }
    offset += static_cast<off_t>(bytes);
  }
  ++rows_;
  return absl::OkStatus();
}

absl::Status UpdateStore::ForEachBlock(
    const std::function<void(int64_t, int64_t, const std::vector<float>&)>& f)
    const {
  if (rows_ == 0 || coordinates_ == 0) return absl::OkStatus();
  const int64_t per_block = std::max<int64_t>(
      1, static_cast<int64_t>(buffer_bytes_ / (sizeof(float) * rows_)));
  std::vector<float> block;
  for (int64_t begin = 0; begin < coordinates_; begin += per_block) {
    const int64_t count = std::min(per_block, coordinates_ - begin);
    block.resize(static_cast<size_t>(count) * rows_);
    for (size_t u = 0; u < rows_; ++u) {
      const off_t offset = (static_cast<off_t>(u) * coordinates_ + begin) *
                           static_cast<off_t>(sizeof(float));
      if (!ReadAll(fd_, reinterpret_cast<char*>(block.data() + u * count),
                   static_cast<size_t>(count) * sizeof(float), offset)) {
        return Errno("cannot read the update store");
      }
    }
    f(begin, count, block);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> UpdateStore::Row(size_t u) const {
  std::vector<float> row(static_cast<size_t>(coordinates_));
  const size_t bytes = row.size() * sizeof(float);
  if (!ReadAll(fd_, reinterpret_cast<char*>(row.data()), bytes,
               static_cast<off_t>(u) * static_cast<off_t>(bytes))) {
    return Errno("cannot read the update store");
  }
  return row;
}

runtime::NamedTensors UpdateStore::Unflatten(
    const std::vector<float>& row) const {
  runtime::NamedTensors out;
  int64_t at = 0;
  for (const auto& t : layout_) {
    if (!t.tensor.is_floating_point()) {
      out.push_back({t.name, at::Tensor()});
      continue;
    }
    const int64_t n = t.tensor.numel();
    out.push_back({t.name, at::from_blob(const_cast<float*>(row.data() + at),
                                         {n}, at::kFloat)
                               .clone()
                               .view(t.tensor.sizes())});
    at += n;
  }
  return out;
}

}  // namespace fedberry::server
