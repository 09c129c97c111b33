#include "runtime/csv_row_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace fedberry::runtime {
namespace {

// Bump when the record layout or the metadata changes: old caches then get
// another key and are rebuilt.
constexpr char kCsvCacheFormat[] = "fedberry csv rows 1";

std::string EncodeSummary(const CsvSummary& s) {
  return EncodeRowCacheFields({{"format", kCsvCacheFormat},
                               {"features", absl::StrCat(s.features)},
                               {"label", s.label_name},
                               {"label_max", absl::StrCat(s.label_max)},
                               {"skipped", absl::StrCat(s.skipped)},
                               {"first_skip", s.first_skip}});
}

std::optional<CsvSummary> DecodeSummary(const RowCache& cache) {
  auto fields = DecodeRowCacheFields(cache.metadata());
  CsvSummary s;
  if (fields["format"] != kCsvCacheFormat ||
      !absl::SimpleAtoi(fields["features"], &s.features) ||
      !absl::SimpleAtoi(fields["label_max"], &s.label_max) ||
      !absl::SimpleAtoi(fields["skipped"], &s.skipped) ||
      !fields.count("label") || s.features + 1 != cache.values_per_record()) {
    return std::nullopt;
  }
  s.label_name = fields["label"];
  s.first_skip = fields["first_skip"];
  return s;
}

// Parses `file` into a new cache at the first writable place.
absl::StatusOr<std::unique_ptr<RowCache>> BuildCache(
    const std::string& file, const DataBinding& binding,
    const std::vector<std::string>& places, uint64_t key) {
  std::optional<RowCacheWriter> writer;
  CsvParse parse(
      file, binding,
      [&](const CsvSummary& s) -> absl::Status {
        absl::StatusOr<RowCacheWriter> w = OpenRowCacheWriter(
            places, key, s.features + 1, RowValueType::kFloat32);
        if (!w.ok()) {
          return base::WithPrefix(w.status(),
                                  absl::StrCat("csv file ", file, ": "));
        }
        writer.emplace(*std::move(w));
        return absl::OkStatus();
      },
      [&](const float* row) { return writer->Append(row); });
  FEDBERRY_RETURN_IF_ERROR(parse.Run());
  writer->set_metadata(EncodeSummary(parse.summary()));
  FEDBERRY_RETURN_IF_ERROR(writer->Finish());
  return RowCache::Open(writer->path(), key);
}

// The file's size and times; NotFound when it does not exist,
// InvalidArgument when it cannot be read or is a folder.
absl::StatusOr<struct stat> StatCsvFile(const std::string& file) {
  struct stat st;
  if (stat(file.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("csv file ", file, " does not exist"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read csv file ", file, ": ", std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("csv file ", file, " is a folder"));
  }
  return st;
}

// The key changes with the file (path, size, mtime) and with every choice
// that shapes the records; normalisation and shape apply at read time.
uint64_t CsvCacheKey(const std::string& file, const struct stat& st,
                     const DataBinding& binding) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::canonical(file, ec);
  if (ec) canonical = std::filesystem::absolute(file, ec);
  RowCacheKey k;
  k.Add(kCsvCacheFormat)
      .Add(canonical.string())
      .Add(static_cast<int64_t>(st.st_size))
      .Add(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
           st.st_mtim.tv_nsec)
      .Add(binding.label_column)
      .Add(static_cast<int64_t>(binding.feature_columns.size()));
  for (const std::string& name : binding.feature_columns) k.Add(name);
  k.Add(binding.task == TaskKind::kClassification ? "classification"
                                                  : "regression")
      .Add(binding.skip_bad_rows ? 1 : 0);
  return k.Digest();
}

// Where the cache of key `key` may be: beside the file, then in the cache
// folder (when given).
std::vector<std::string> CsvCachePlaces(const std::string& file, uint64_t key,
                                        const std::string& cache_dir) {
  const std::string name =
      absl::StrCat(std::filesystem::path(file).filename().string(),
                   ".fedberry-", RowCacheKeyHex(key), ".rows");
  std::vector<std::string> places = {
      absl::StrCat(file, ".fedberry-", RowCacheKeyHex(key), ".rows")};
  if (!cache_dir.empty()) {
    places.push_back((std::filesystem::path(cache_dir) / name).string());
  }
  return places;
}

}  // namespace

absl::StatusOr<CsvRows> OpenCsvRows(const std::string& file,
                                    const DataBinding& binding,
                                    const std::string& cache_dir) {
  FEDBERRY_ASSIGN_OR_RETURN(const struct stat st, StatCsvFile(file));
  const uint64_t key = CsvCacheKey(file, st, binding);
  const std::vector<std::string> places = CsvCachePlaces(file, key, cache_dir);
  CsvRows rows;
  rows.beside = places[0];
  std::optional<CsvSummary> summary;
  rows.cache = FindRowCache(places, key, [&](const RowCache& c) {
    if (c.type() != RowValueType::kFloat32) return false;
    summary = DecodeSummary(c);
    return summary.has_value();
  });
  rows.built = rows.cache == nullptr;
  if (rows.built) {
    FEDBERRY_ASSIGN_OR_RETURN(rows.cache,
                              BuildCache(file, binding, places, key));
    summary = DecodeSummary(*rows.cache);
    if (!summary) {
      return absl::InternalError(
          absl::StrCat("row cache ", rows.cache->path(), " lost its summary"));
    }
  }
  rows.summary = *summary;
  return rows;
}

}  // namespace fedberry::runtime
