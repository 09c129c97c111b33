#include "runtime/row_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fedberry::runtime {
namespace {

constexpr char kMagic[8] = {'F', 'B', 'R', 'O', 'W', 'S', '1', '\n'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kBufferBytes = 1 << 20;

size_t ValueBytes(RowValueType type) {
  return type == RowValueType::kUint8 ? 1 : 4;
}

std::string ErrnoText(int err) { return std::strerror(err); }

absl::Status ErrnoStatus(int err, const std::string& what) {
  std::string message = absl::StrCat(what, ": ", ErrnoText(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(message);
  }
  if (err == EACCES || err == EPERM || err == EROFS) {
    return absl::PermissionDeniedError(message);
  }
  return absl::InvalidArgumentError(message);
}

absl::Status WriteAll(int fd, const char* data, size_t n, off_t* offset,
                      const std::string& path) {
  while (n > 0) {
    ssize_t got = offset ? pwrite(fd, data, n, *offset) : write(fd, data, n);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("cannot write row cache ", path));
    }
    data += got;
    n -= static_cast<size_t>(got);
    if (offset) *offset += got;
  }
  return absl::OkStatus();
}

void PutU32(char* p, uint32_t v) { std::memcpy(p, &v, sizeof(v)); }
void PutU64(char* p, uint64_t v) { std::memcpy(p, &v, sizeof(v)); }
uint32_t GetU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Two writers of one path in one process (simulated clients) or in two must
// not share a temporary file; the last rename wins with identical content.
std::string TemporaryPath(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp.", getpid(), ".", counter++);
}

}  // namespace

std::string RowCacheKeyHex(uint64_t key) {
  return absl::StrCat(absl::Hex(key, absl::kZeroPad16));
}

RowCacheKey& RowCacheKey::Add(std::string_view field) {
  Add(static_cast<int64_t>(field.size()));
  material_.append(field.data(), field.size());
  return *this;
}

RowCacheKey& RowCacheKey::Add(int64_t value) {
  char bytes[sizeof(value)];
  std::memcpy(bytes, &value, sizeof(value));
  material_.append(bytes, sizeof(bytes));
  return *this;
}

uint64_t RowCacheKey::Digest() const {
  return XXH3_64bits(material_.data(), material_.size());
}

absl::StatusOr<RowCacheWriter> RowCacheWriter::Open(const std::string& path,
                                                    uint64_t key,
                                                    int64_t values_per_record,
                                                    std::string metadata,
                                                    RowValueType type) {
  if (values_per_record < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("row cache ", path, ": ", values_per_record,
                     " values per record (at least 1 needed)"));
  }
  RowCacheWriter w;
  w.path_ = path;
  w.tmp_path_ = TemporaryPath(path);
  w.key_ = key;
  w.values_per_record_ = values_per_record;
  w.type_ = type;
  w.metadata_ = std::move(metadata);
  w.fd_ =
      open(w.tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (w.fd_ < 0) {
    return ErrnoStatus(errno,
                       absl::StrCat("cannot create row cache ", w.tmp_path_));
  }
  // The header is rewritten by Finish() once the record count is known.
  w.buffer_.reserve(kBufferBytes);
  w.buffer_.assign(kHeaderBytes, '\0');
  return w;
}

RowCacheWriter::RowCacheWriter(RowCacheWriter&& other) noexcept {
  *this = std::move(other);
}

RowCacheWriter& RowCacheWriter::operator=(RowCacheWriter&& other) noexcept {
  if (this != &other) {
    Abandon();
    fd_ = other.fd_;
    other.fd_ = -1;
    path_ = std::move(other.path_);
    tmp_path_ = std::move(other.tmp_path_);
    key_ = other.key_;
    values_per_record_ = other.values_per_record_;
    type_ = other.type_;
    metadata_ = std::move(other.metadata_);
    records_ = other.records_;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

RowCacheWriter::~RowCacheWriter() { Abandon(); }

void RowCacheWriter::Abandon() {
  if (fd_ < 0) return;
  close(fd_);
  fd_ = -1;
  unlink(tmp_path_.c_str());
}

absl::Status RowCacheWriter::Append(const float* record) {
  return AppendBytes(record, RowValueType::kFloat32);
}

absl::Status RowCacheWriter::Append(const uint8_t* record) {
  return AppendBytes(record, RowValueType::kUint8);
}

absl::Status RowCacheWriter::AppendBytes(const void* record,
                                         RowValueType type) {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("row cache ", path_, " is finished or failed"));
  }
  if (type != type_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "row cache ", path_, " holds ",
        type_ == RowValueType::kUint8 ? "uint8" : "float32", " records"));
  }
  const size_t n = static_cast<size_t>(values_per_record_) * ValueBytes(type_);
  const char* p = static_cast<const char*>(record);
  buffer_.insert(buffer_.end(), p, p + n);
  ++records_;
  if (buffer_.size() >= kBufferBytes) return Flush();
  return absl::OkStatus();
}

absl::Status RowCacheWriter::Flush() {
  absl::Status s =
      WriteAll(fd_, buffer_.data(), buffer_.size(), nullptr, tmp_path_);
  buffer_.clear();
  if (!s.ok()) Abandon();
  return s;
}

absl::Status RowCacheWriter::Finish() {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("row cache ", path_, " is finished or failed"));
  }
  buffer_.insert(buffer_.end(), metadata_.begin(), metadata_.end());
  if (absl::Status s = Flush(); !s.ok()) return s;
  char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  PutU32(header + 8, kVersion);
  PutU32(header + 12, static_cast<uint32_t>(type_));
  PutU64(header + 16, key_);
  PutU64(header + 24, static_cast<uint64_t>(records_));
  PutU64(header + 32, static_cast<uint64_t>(values_per_record_));
  PutU64(header + 40, metadata_.size());
  off_t offset = 0;
  absl::Status s = WriteAll(fd_, header, sizeof(header), &offset, tmp_path_);
  // fsync before rename: after a power cut the name must not point at
  // blocks that never reached the card.
  if (s.ok() && fsync(fd_) != 0) {
    s = ErrnoStatus(errno, absl::StrCat("cannot fsync row cache ", tmp_path_));
  }
  if (s.ok() && rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    s = ErrnoStatus(errno, absl::StrCat("cannot rename row cache ", tmp_path_,
                                        " to ", path_));
  }
  if (!s.ok()) {
    Abandon();
    return s;
  }
  close(fd_);
  fd_ = -1;
  // Make the rename itself durable; a failure here loses only the cache.
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  int dir_fd =
      open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return absl::OkStatus();
}

namespace {

// What a row cache's header says, checked.
struct RowCacheHeader {
  RowValueType type = RowValueType::kFloat32;
  uint64_t key = 0;
  uint64_t rows = 0;
  uint64_t values = 0;  // per record
  uint64_t metadata_bytes = 0;
  uint64_t record_bytes = 0;
};

// The first `got` bytes of a file of `size` bytes as a header made for
// `expected_key`. InvalidArgument saying what is wrong (the caller names
// the file).
absl::StatusOr<RowCacheHeader> ParseRowCacheHeader(const char* header,
                                                   size_t got, uint64_t size,
                                                   uint64_t expected_key) {
  const auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(what);
  };
  if (got >= sizeof(kMagic) &&
      std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return bad("is not a fedberry row cache (wrong magic)");
  }
  if (got < kHeaderBytes) {
    return bad(absl::StrCat("is truncated: ", size, " bytes, shorter than ",
                            "its ", kHeaderBytes, "-byte header"));
  }
  const uint32_t version = GetU32(header + 8);
  if (version != kVersion) {
    return bad(
        absl::StrCat("has version ", version, "; this build reads ", kVersion));
  }
  const uint32_t type = GetU32(header + 12);
  if (type != static_cast<uint32_t>(RowValueType::kFloat32) &&
      type != static_cast<uint32_t>(RowValueType::kUint8)) {
    return bad(absl::StrCat("has unknown value type ", type));
  }
  RowCacheHeader h;
  h.type = static_cast<RowValueType>(type);
  h.key = GetU64(header + 16);
  if (h.key != expected_key) {
    return bad(absl::StrCat("was made for key ", RowCacheKeyHex(h.key),
                            ", not ", RowCacheKeyHex(expected_key),
                            ": other data"));
  }
  h.rows = GetU64(header + 24);
  h.values = GetU64(header + 32);
  h.metadata_bytes = GetU64(header + 40);
  const uint64_t value_bytes = ValueBytes(h.type);
  // Bounds keep the products below from overflowing on a damaged header.
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  if (h.values == 0 || h.values > kLimit / value_bytes) {
    return bad(absl::StrCat("has ", h.values, " values per record"));
  }
  h.record_bytes = h.values * value_bytes;
  if (h.rows > kLimit / h.record_bytes || h.metadata_bytes > kLimit) {
    return bad(absl::StrCat("has a damaged header (", h.rows, " records, ",
                            h.metadata_bytes, " metadata bytes)"));
  }
  const uint64_t want =
      kHeaderBytes + h.rows * h.record_bytes + h.metadata_bytes;
  if (size < want) {
    return bad(
        absl::StrCat("is truncated: ", size, " bytes, its header says ", want));
  }
  if (size > want) {
    return bad(absl::StrCat("has ", size - want, " trailing bytes"));
  }
  return h;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RowCache>> RowCache::Open(
    const std::string& path, uint64_t expected_key) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot open row cache ", path));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return ErrnoStatus(err, absl::StrCat("cannot stat row cache ", path));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  char header[kHeaderBytes] = {};
  ssize_t got = pread(fd, header, sizeof(header), 0);
  if (got < 0) {
    int err = errno;
    close(fd);
    return ErrnoStatus(err, absl::StrCat("cannot read row cache ", path));
  }
  absl::StatusOr<RowCacheHeader> h =
      ParseRowCacheHeader(header, static_cast<size_t>(got), size, expected_key);
  if (!h.ok()) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("row cache ", path, " ", h.status().message()));
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    int err = errno;
    close(fd);
    return ErrnoStatus(err, absl::StrCat("cannot map row cache ", path));
  }
  close(fd);  // the mapping keeps the file open
  auto cache = std::unique_ptr<RowCache>(new RowCache());
  cache->map_ = map;
  cache->map_size_ = size;
  cache->path_ = path;
  cache->key_ = h->key;
  cache->rows_ = static_cast<int64_t>(h->rows);
  cache->values_per_record_ = static_cast<int64_t>(h->values);
  cache->record_bytes_ = h->record_bytes;
  cache->type_ = h->type;
  cache->metadata_.assign(
      static_cast<const char*>(map) + kHeaderBytes + h->rows * h->record_bytes,
      h->metadata_bytes);
  return cache;
}

RowCache::RowCache(RowCache&& other) noexcept { *this = std::move(other); }

RowCache& RowCache::operator=(RowCache&& other) noexcept {
  if (this != &other) {
    Unmap();
    map_ = other.map_;
    map_size_ = other.map_size_;
    other.map_ = nullptr;
    other.map_size_ = 0;
    path_ = std::move(other.path_);
    key_ = other.key_;
    rows_ = other.rows_;
    values_per_record_ = other.values_per_record_;
    record_bytes_ = other.record_bytes_;
    type_ = other.type_;
    metadata_ = std::move(other.metadata_);
    other.rows_ = 0;
  }
  return *this;
}

RowCache::~RowCache() { Unmap(); }

void RowCache::Unmap() {
  if (map_ != nullptr) munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

std::string EncodeRowCacheFields(
    const std::map<std::string, std::string>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    absl::StrAppend(&out, name, "=", absl::CEscape(value), "\n");
  }
  return out;
}

std::map<std::string, std::string> DecodeRowCacheFields(
    std::string_view metadata) {
  std::map<std::string, std::string> out;
  // Debian's Abseil has its own string_view, not std's.
  const absl::string_view text(metadata.data(), metadata.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    std::string value;
    if (!absl::CUnescape(line.substr(eq + 1), &value)) continue;
    out[std::string(line.substr(0, eq))] = std::move(value);
  }
  return out;
}

std::unique_ptr<RowCache> FindRowCache(
    const std::vector<std::string>& paths, uint64_t key,
    const std::function<bool(const RowCache&)>& usable) {
  for (const std::string& path : paths) {
    absl::StatusOr<std::unique_ptr<RowCache>> cache = RowCache::Open(path, key);
    if (cache.ok() && usable(**cache)) return *std::move(cache);
  }
  return nullptr;
}

absl::StatusOr<RowCacheWriter> OpenRowCacheWriter(
    const std::vector<std::string>& paths, uint64_t key,
    int64_t values_per_record, RowValueType type) {
  std::vector<std::string> failures;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) {
      // A fallback folder (e.g. ~/.cache/fedberry) may not exist yet.
      std::error_code ec;
      std::filesystem::create_directories(
          std::filesystem::path(paths[i]).parent_path(), ec);
    }
    absl::StatusOr<RowCacheWriter> w =
        RowCacheWriter::Open(paths[i], key, values_per_record, {}, type);
    if (w.ok()) return w;
    failures.push_back(std::string(w.status().message()));
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "no place to write the row cache (tried ", paths.size(),
      paths.size() == 1 ? " place" : " places",
      "; set a writable cache folder): ", absl::StrJoin(failures, "; ")));
}

}  // namespace fedberry::runtime
