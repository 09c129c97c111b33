// Reads IDX files (the MNIST / Fashion-MNIST container), gzip-compressed or
// not, keeping values as raw uint8. A caller may ask for a subset of rows so a
// client holds only its own partition in memory.
// Thread-safe: free functions with no shared state.
#ifndef FEDBERRY_RUNTIME_IDX_READER_H_
#define FEDBERRY_RUNTIME_IDX_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::runtime {

struct IdxArray {
  // dims[0] is the number of rows (items); the rest is one item's shape.
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // rows * row_size bytes, row-major

  int64_t rows() const { return dims.empty() ? 0 : dims[0]; }
  int64_t row_size() const;
};

// Reads the header only (magic and dims). InvalidArgument names the file and
// what is wrong (bad magic, unsupported type, truncated); NotFound if missing.
absl::StatusOr<std::vector<int64_t>> ReadIdxDims(const std::string& path);

// Reads `path`. With `rows` (ascending, unique, each < the file's row count)
// only those rows are kept, in that order; the rest is streamed past.
// Errors as ReadIdxDims, plus InvalidArgument when the payload is truncated,
// has trailing bytes, or `rows` is out of range.
absl::StatusOr<IdxArray> ReadIdx(const std::string& path,
                                 const std::vector<int64_t>* rows = nullptr);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_IDX_READER_H_
