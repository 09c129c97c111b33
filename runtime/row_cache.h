// A compact binary file of fixed-size records (float32 or uint8) that a data
// source derives once from the user's files (parsed CSV rows, decoded images)
// and later reads by memory-mapping it: the pages are clean and file-backed,
// so a data set larger than RAM is read in bounded resident memory, and a
// second open parses nothing. Written under a temporary name, fsync'd and
// renamed into place, so a reader never sees a half-written file and writers
// racing on one path leave one whole file.
//
// Layout (native byte order; every board fedberry targets is little-endian):
//   offset  0: magic "FBROWS1\n"
//           8: u32 version (1), u32 value type (1 float32, 2 uint8)
//          16: u64 key (the caller's: what the records were derived from)
//          24: u64 record count, u64 values per record, u64 metadata bytes
//          48: zero padding to 64, so records are aligned
//          64: the records, then the metadata string
//
// Thread-safety: a RowCache is immutable once open; its const calls may run
// concurrently. A RowCacheWriter is used by one thread at a time.
#ifndef FEDBERRY_RUNTIME_ROW_CACHE_H_
#define FEDBERRY_RUNTIME_ROW_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fedberry::runtime {

enum class RowValueType : uint32_t { kFloat32 = 1, kUint8 = 2 };

class RowCacheWriter {
 public:
  // Creates `path`'s temporary file (in the same folder, so the final rename
  // is atomic). Errors (InvalidArgument, or the errno's meaning) name the
  // temporary file, e.g. when the folder cannot be written.
  static absl::StatusOr<RowCacheWriter> Open(
      const std::string& path, uint64_t key, int64_t values_per_record,
      std::string metadata = {}, RowValueType type = RowValueType::kFloat32);

  RowCacheWriter(RowCacheWriter&& other) noexcept;
  RowCacheWriter& operator=(RowCacheWriter&& other) noexcept;
  RowCacheWriter(const RowCacheWriter&) = delete;
  RowCacheWriter& operator=(const RowCacheWriter&) = delete;
  // Without Finish(), removes the temporary file: nothing half-made stays.
  ~RowCacheWriter();

  // One record of values_per_record values; the overload must match the
  // value type (FailedPrecondition otherwise, or after Finish()).
  absl::Status Append(const float* record);
  absl::Status Append(const uint8_t* record);
  // Replaces the metadata (often known only once every record is seen).
  void set_metadata(std::string metadata) { metadata_ = std::move(metadata); }
  // Writes the header and metadata, fsyncs and renames into place.
  absl::Status Finish();

  const std::string& path() const { return path_; }
  int64_t records() const { return records_; }

 private:
  RowCacheWriter() = default;
  absl::Status AppendBytes(const void* record, RowValueType type);
  absl::Status Flush();
  void Abandon();

  int fd_ = -1;
  std::string path_;
  std::string tmp_path_;
  uint64_t key_ = 0;
  int64_t values_per_record_ = 0;
  RowValueType type_ = RowValueType::kFloat32;
  std::string metadata_;
  int64_t records_ = 0;
  std::vector<char> buffer_;  // pending bytes, written in large blocks
};

class RowCache {
 public:
  // Maps `path` read-only. NotFound when it does not exist; InvalidArgument
  // naming the file when it is not a row cache (magic), has another version,
  // was made for another key, or is truncated or has trailing bytes.
  static absl::StatusOr<std::unique_ptr<RowCache>> Open(const std::string& path,
                                                        uint64_t expected_key);

  RowCache(RowCache&& other) noexcept;
  RowCache& operator=(RowCache&& other) noexcept;
  RowCache(const RowCache&) = delete;
  RowCache& operator=(const RowCache&) = delete;
  ~RowCache();  // munmaps

  int64_t rows() const { return rows_; }
  int64_t values_per_record() const { return values_per_record_; }
  RowValueType type() const { return type_; }
  uint64_t key() const { return key_; }
  const std::string& metadata() const { return metadata_; }
  const std::string& path() const { return path_; }

  // Record i (0 <= i < rows()) of a float32 cache.
  const float* record(int64_t i) const {
    return reinterpret_cast<const float*>(RecordBytes(i));
  }
  // Record i (0 <= i < rows()) of a uint8 cache.
  const uint8_t* record_u8(int64_t i) const { return RecordBytes(i); }

 private:
  RowCache() = default;
  const uint8_t* RecordBytes(int64_t i) const {
    return static_cast<const uint8_t*>(map_) + kDataOffset +
           static_cast<size_t>(i) * record_bytes_;
  }
  void Unmap();

  static constexpr size_t kDataOffset = 64;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::string path_;
  uint64_t key_ = 0;
  int64_t rows_ = 0;
  int64_t values_per_record_ = 0;
  size_t record_bytes_ = 0;
  RowValueType type_ = RowValueType::kFloat32;
  std::string metadata_;
};

// A cache key: what the records were derived from (file names, sizes,
// mtimes, the options that shape the records), hashed with XXH3. Fields are
// length-prefixed, so ("ab", "c") and ("a", "bc") differ.
class RowCacheKey {
 public:
  RowCacheKey& Add(std::string_view field);
  RowCacheKey& Add(int64_t value);
  uint64_t Digest() const;

 private:
  std::string material_;
};

// 16 lowercase hex digits, as in the cache file names.
std::string RowCacheKeyHex(uint64_t key);

// Metadata as "name=value" lines with C-escaped values, for the fields a
// source keeps beside its records. Decoding skips malformed lines.
std::string EncodeRowCacheFields(
    const std::map<std::string, std::string>& fields);
std::map<std::string, std::string> DecodeRowCacheFields(
    std::string_view metadata);

// A source's cache lives at the first of several places (beside the user's
// files, then a fallback folder). The first of `paths` holding a valid cache
// for `key` that `usable` accepts, or nullptr: a missing, damaged or foreign
// file there just means "build it".
std::unique_ptr<RowCache> FindRowCache(
    const std::vector<std::string>& paths, uint64_t key,
    const std::function<bool(const RowCache&)>& usable);

// RowCacheWriter::Open at the first of `paths` whose folder takes the
// temporary file (creating a missing folder for every place but the first).
// The error names every place tried and why each failed.
absl::StatusOr<RowCacheWriter> OpenRowCacheWriter(
    const std::vector<std::string>& paths, uint64_t key,
    int64_t values_per_record, RowValueType type);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_ROW_CACHE_H_
