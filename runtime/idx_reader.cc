#include "runtime/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace fedberry::runtime {
namespace {

constexpr uint8_t kTypeUnsignedByte = 0x08;
constexpr int kMaxDims = 4;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

absl::StatusOr<GzFile> Open(const std::string& path) {
  // gzopen reads plain files transparently, so .gz and unpacked both work.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("IDX file ", path, " does not exist"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open IDX file ", path, ": ", std::strerror(errno)));
  }
  gzbuffer(f, 1 << 16);
  return GzFile(f);
}

// Reads exactly n bytes; false on a short read (truncated file).
absl::Status ReadExact(gzFile f, const std::string& path, void* out, size_t n,
                       const char* what) {
  size_t done = 0;
  auto* p = static_cast<char*>(out);
  while (done < n) {
    int got =
        gzread(f, p + done,
               static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30)));
    if (got < 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      return absl::InvalidArgumentError(absl::StrCat(
          "IDX file ", path, " is corrupt while reading ", what, ": ", msg));
    }
    if (got == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("IDX file ", path, " is truncated: it ends inside the ",
                       what, " (expected ", n, " bytes, found ", done, ")"));
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> ReadHeader(gzFile f,
                                                const std::string& path) {
  uint8_t magic[4];
  FEDBERRY_RETURN_IF_ERROR(ReadExact(f, path, magic, 4, "header"));
  if (magic[0] != 0 || magic[1] != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IDX file ", path, " has a wrong magic number (first bytes ",
        static_cast<int>(magic[0]), " ", static_cast<int>(magic[1]),
        ", expected 0 0): not an IDX file"));
  }
  if (magic[2] != kTypeUnsignedByte) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IDX file ", path, " holds element type 0x", absl::Hex(magic[2]),
        "; only unsigned bytes (0x08) are supported"));
  }
  int ndims = magic[3];
  if (ndims < 1 || ndims > kMaxDims) {
    return absl::InvalidArgumentError(
        absl::StrCat("IDX file ", path, " declares ", ndims,
                     " dimensions (1 to ", kMaxDims, " supported)"));
  }
  std::vector<int64_t> dims(ndims);
  for (int i = 0; i < ndims; ++i) {
    uint8_t b[4];
    FEDBERRY_RETURN_IF_ERROR(ReadExact(f, path, b, 4, "header"));
    dims[i] = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) |
              (int64_t{b[2]} << 8) | int64_t{b[3]};
    if (dims[i] <= 0 || (i > 0 && dims[i] > 65536)) {
      return absl::InvalidArgumentError(
          absl::StrCat("IDX file ", path, " has an invalid size ", dims[i],
                       " in dimension ", i));
    }
  }
  return dims;
}

}  // namespace

int64_t IdxArray::row_size() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

absl::StatusOr<std::vector<int64_t>> ReadIdxDims(const std::string& path) {
  FEDBERRY_ASSIGN_OR_RETURN(GzFile f, Open(path));
  return ReadHeader(f.get(), path);
}

absl::StatusOr<IdxArray> ReadIdx(const std::string& path,
                                 const std::vector<int64_t>* rows) {
  FEDBERRY_ASSIGN_OR_RETURN(GzFile f, Open(path));
  IdxArray out;
  FEDBERRY_ASSIGN_OR_RETURN(out.dims, ReadHeader(f.get(), path));
  const int64_t total_rows = out.dims[0];
  const int64_t row_size = out.row_size();
  if (rows == nullptr) {
    out.data.resize(static_cast<size_t>(total_rows * row_size));
    FEDBERRY_RETURN_IF_ERROR(
        ReadExact(f.get(), path, out.data.data(), out.data.size(), "data"));
  } else {
    for (size_t i = 0; i < rows->size(); ++i) {
      int64_t r = (*rows)[i];
      if (r < 0 || r >= total_rows || (i > 0 && r <= (*rows)[i - 1])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "row selection for IDX file ", path, " is invalid at position ", i,
            " (row ", r, "; rows must be ascending and below ", total_rows,
            ")"));
      }
    }
    out.dims[0] = static_cast<int64_t>(rows->size());
    out.data.resize(rows->size() * static_cast<size_t>(row_size));
    std::vector<uint8_t> skip(static_cast<size_t>(row_size));
    size_t next = 0;
    for (int64_t r = 0; r < total_rows; ++r) {
      bool keep = next < rows->size() && (*rows)[next] == r;
      uint8_t* dst = keep ? out.data.data() + next * row_size : skip.data();
      FEDBERRY_RETURN_IF_ERROR(ReadExact(f.get(), path, dst, row_size, "data"));
      if (keep) ++next;
    }
  }
  char extra;
  if (gzread(f.get(), &extra, 1) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("IDX file ", path, " has bytes after its declared ",
                     absl::StrJoin(out.dims, "x"), " payload"));
  }
  return out;
}

}  // namespace fedberry::runtime
