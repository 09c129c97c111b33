#include "runtime/csv_dataset.h"

#include <csv.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/binding_values.h"
#include "runtime/row_cache.h"

namespace fedberry::runtime {
namespace {

constexpr size_t kChunkBytes = 64 << 10;
// libcsv buffers a field until it ends; an unclosed quote would otherwise
// pull the rest of a large file into memory.
constexpr size_t kMaxFieldBytes = 16 << 20;
// Labels are stored as float32, exact up to 2^24.
constexpr double kMaxClassLabel = 16777216.0;
// Bump when the record layout or the metadata changes: old caches then get
// another key and are rebuilt.
constexpr char kCsvCacheFormat[] = "fedberry csv rows 1";

// A field or name as quoted in messages: cut short (at a UTF-8 character
// boundary), with quotes, backslashes and control bytes escaped so a message
// stays one line; other UTF-8 text is kept readable.
std::string Quote(std::string_view field) {
  constexpr size_t kMax = 40;
  size_t end = std::min(field.size(), kMax);
  while (end < field.size() && end > 0 && (field[end] & 0xC0) == 0x80) --end;
  std::string out = "\"";
  for (char c : field.substr(0, end)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += absl::StrCat("\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  if (end < field.size()) out += "...";
  return out + "\"";
}

std::string QuoteNames(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(Quote(n));
  return absl::StrJoin(quoted, ", ");
}

int64_t CountLineBreaks(std::string_view s) {
  int64_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n') ++n;
    if (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n')) ++n;
  }
  return n;
}

// What is kept beside the records, so a reused cache needs no parsing to
// describe itself.
struct CsvSummary {
  int64_t features = 0;
  std::string label_name;
  int64_t label_max = -1;  // classification; -1 for regression
  int64_t skipped = 0;
  std::string first_skip;  // "line 17, column ...", without the file
};

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

// The parse: libcsv calls OnField per field and OnRecord per record end; this
// holds what they need. Line numbers are counted here (libcsv has none):
// every record terminator ends a physical line, except the LF of a CRLF, and
// line breaks inside quoted fields count too.
class CsvParse {
 public:
  using HeaderFn = std::function<absl::Status(const CsvSummary&)>;
  using RowFn = std::function<absl::Status(const float*)>;

  CsvParse(const std::string& file, const DataBinding& binding,
           HeaderFn on_header, RowFn on_row)
      : file_(file),
        binding_(binding),
        on_header_(std::move(on_header)),
        on_row_(std::move(on_row)) {}

  // Reads the whole file through libcsv, chunk by chunk.
  absl::Status Run();
  const CsvSummary& summary() const { return summary_; }
  int64_t rows() const { return rows_; }

 private:
  static void OnField(void* data, size_t len, void* self) {
    static_cast<CsvParse*>(self)->Field(
        std::string_view(static_cast<const char*>(data), len));
  }
  static void OnRecord(int terminator, void* self) {
    static_cast<CsvParse*>(self)->Record(terminator);
  }
  void Field(std::string_view field);
  void Record(int terminator);
  void EndHeader();
  void EndRow();
  absl::Status SelectColumns();
  void ParseValue(std::string_view field, int slot);

  const std::string& file_;
  const DataBinding& binding_;
  HeaderFn on_header_;
  RowFn on_row_;
  absl::Status status_;  // the first fatal error; callbacks stop after it

  int64_t line_ = 1;         // the physical line the next record starts on
  int64_t record_line_ = 1;  // the line the current record started on
  bool after_cr_ = false;    // the last terminator was a CR
  int64_t column_ = 0;       // fields seen in the current record
  int64_t breaks_ = 0;       // line breaks inside the current record's fields
  std::string problem_;      // the first problem of the current record

  bool header_done_ = false;
  std::vector<std::string> header_;
  std::vector<int> slot_;  // per column: feature index, features (label) or -1
  std::vector<float> values_;  // features, then the label
  int64_t rows_ = 0;
  CsvSummary summary_;
};

absl::Status CsvParse::Run() {
  int fd = open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("csv file ", file_, " does not exist"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open csv file ", file_, ": ", std::strerror(err)));
  }
  csv_parser parser;
  // REPALL_NL: blank lines and the LF of a CRLF reach OnRecord, so lines can
  // be counted. Not strict: a stray quote inside an unquoted field is kept
  // as text, as Python's csv module does.
  if (csv_init(&parser, CSV_REPALL_NL) != 0) {
    close(fd);
    return absl::ResourceExhaustedError("cannot set up the csv parser");
  }
  std::vector<char> chunk(kChunkBytes);
  absl::Status io;
  while (status_.ok()) {
    ssize_t got = read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      io = absl::InvalidArgumentError(absl::StrCat(
          "cannot read csv file ", file_, ": ", std::strerror(errno)));
      break;
    }
    if (got == 0) {
      csv_fini(&parser, OnField, OnRecord, this);
      break;
    }
    const size_t n = static_cast<size_t>(got);
    if (csv_parse(&parser, chunk.data(), n, OnField, OnRecord, this) != n) {
      io = absl::ResourceExhaustedError(
          absl::StrCat("csv file ", file_, " line ", line_, ": ",
                       csv_strerror(csv_error(&parser))));
      break;
    }
    if (csv_get_buffer_size(&parser) > kMaxFieldBytes && status_.ok()) {
      io = absl::InvalidArgumentError(
          absl::StrCat(file_, " line ", line_, ": a field longer than ",
                       kMaxFieldBytes >> 20, " MiB (an unclosed quote?)"));
      break;
    }
  }
  csv_free(&parser);
  close(fd);
  FEDBERRY_RETURN_IF_ERROR(io);
  FEDBERRY_RETURN_IF_ERROR(status_);
  if (!header_done_) {
    return absl::InvalidArgumentError(
        absl::StrCat("csv file ", file_,
                     " is empty: a header row naming the columns is "
                     "required"));
  }
  if (rows_ == 0 && summary_.skipped == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("csv file ", file_, " has a header but no rows"));
  }
  if (rows_ == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "csv file ", file_, " has no good rows: all ", summary_.skipped,
        " were skipped (first: ", file_, " ", summary_.first_skip, ")"));
  }
  return absl::OkStatus();
}

void CsvParse::Field(std::string_view field) {
  if (!status_.ok()) return;
  if (column_ == 0) record_line_ = line_;
  breaks_ += CountLineBreaks(field);
  if (!header_done_) {
    header_.emplace_back(field);
  } else if (column_ < static_cast<int64_t>(slot_.size()) &&
             slot_[column_] >= 0 && problem_.empty()) {
    ParseValue(field, slot_[column_]);
  }
  ++column_;
}

void CsvParse::Record(int terminator) {
  if (!status_.ok()) return;
  const bool crlf_tail = terminator == '\n' && after_cr_ && column_ == 0;
  after_cr_ = terminator == '\r';
  const int64_t ends_line = terminator == '\r' || terminator == '\n';
  if (column_ == 0) {  // a blank line: not a record
    if (!crlf_tail) line_ += ends_line;
    return;
  }
  if (header_done_) {
    EndRow();
  } else {
    EndHeader();
  }
  line_ += breaks_ + ends_line;
  column_ = 0;
  breaks_ = 0;
  problem_.clear();
}

void CsvParse::EndHeader() {
  header_done_ = true;
  // Spreadsheets often start UTF-8 files with a byte order mark.
  if (header_[0].rfind("\xEF\xBB\xBF", 0) == 0) header_[0].erase(0, 3);
  status_ = SelectColumns();
  if (status_.ok()) status_ = on_header_(summary_);
}

absl::Status CsvParse::SelectColumns() {
  std::map<std::string, int> index;
  for (size_t i = 0; i < header_.size(); ++i) {
    if (!index.emplace(header_[i], static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("csv file ", file_, ": the header names column ",
                       Quote(header_[i]), " twice"));
    }
  }
  auto find = [&](const std::string& name, int* out) {
    auto it = index.find(name);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("csv file ", file_, " has no column ", Quote(name),
                       "; its header has ", QuoteNames(header_)));
    }
    *out = it->second;
    return absl::OkStatus();
  };
  int label = static_cast<int>(header_.size()) - 1;
  if (!binding_.label_column.empty()) {
    FEDBERRY_RETURN_IF_ERROR(find(binding_.label_column, &label));
  }
  std::vector<int> features;
  if (binding_.feature_columns.empty()) {
    for (int i = 0; i < static_cast<int>(header_.size()); ++i) {
      if (i != label) features.push_back(i);
    }
  } else {
    std::set<int> seen;
    for (const std::string& name : binding_.feature_columns) {
      int column = -1;
      FEDBERRY_RETURN_IF_ERROR(find(name, &column));
      if (column == label) {
        return absl::InvalidArgumentError(
            absl::StrCat("csv file ", file_, ": column ", Quote(name),
                         " is both the label and a feature"));
      }
      if (!seen.insert(column).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("csv file ", file_, ": feature column ", Quote(name),
                         " is selected twice"));
      }
      features.push_back(column);
    }
  }
  if (features.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "csv file ", file_, " has no feature columns besides the label ",
        Quote(header_[label]), "; its header has ", QuoteNames(header_)));
  }
  slot_.assign(header_.size(), -1);
  for (size_t f = 0; f < features.size(); ++f) {
    slot_[features[f]] = static_cast<int>(f);
  }
  slot_[label] = static_cast<int>(features.size());
  values_.assign(features.size() + 1, 0.0f);
  summary_.features = static_cast<int64_t>(features.size());
  summary_.label_name = header_[label];
  return absl::OkStatus();
}

void CsvParse::ParseValue(std::string_view field, int slot) {
  const bool is_label = slot == summary_.features;
  auto fail = [&](const std::string& what) {
    problem_ = absl::StrCat("line ", record_line_, ", column ",
                            Quote(header_[column_]), ": ", what);
  };
  // Debian's Abseil has its own string_view, not std's.
  const absl::string_view text(field.data(), field.size());
  double v;
  if (!absl::SimpleAtod(text, &v)) {
    // SimpleAtod already allows surrounding spaces.
    fail(absl::StripAsciiWhitespace(text).empty()
             ? std::string("the value is empty")
             : absl::StrCat(Quote(field), " is not a number"));
    return;
  }
  if (!std::isfinite(v)) {
    fail(absl::StrCat(Quote(field), " is not a finite number"));
    return;
  }
  if (std::fabs(v) > FLT_MAX) {
    fail(absl::StrCat(Quote(field), " is outside the float32 range"));
    return;
  }
  if (is_label && binding_.task == TaskKind::kClassification) {
    if (v < 0 || v != std::floor(v)) {
      fail(absl::StrCat("class label ", Quote(field),
                        " is not a non-negative integer"));
      return;
    }
    if (v > kMaxClassLabel) {
      fail(absl::StrCat("class label ", Quote(field), " is above ",
                        static_cast<int64_t>(kMaxClassLabel)));
      return;
    }
  }
  values_[slot] = static_cast<float>(v);
}

void CsvParse::EndRow() {
  const auto columns = static_cast<int64_t>(header_.size());
  if (column_ != columns) {
    problem_ = absl::StrCat("line ", record_line_, ": ", column_,
                            column_ == 1 ? " value" : " values",
                            ", but the header has ", columns, " columns");
    if (column_ < columns) {
      absl::StrAppend(&problem_, " (no value for column ",
                      Quote(header_[column_]), ")");
    }
    if (breaks_ > 0) {
      absl::StrAppend(&problem_,
                      " (a quoted field spans lines: an unclosed "
                      "quote?)");
    }
  }
  if (!problem_.empty()) {
    if (!binding_.skip_bad_rows) {
      status_ = absl::InvalidArgumentError(absl::StrCat(file_, " ", problem_));
      return;
    }
    if (summary_.skipped++ == 0) summary_.first_skip = problem_;
    return;
  }
  status_ = on_row_(values_.data());
  ++rows_;
  if (binding_.task == TaskKind::kClassification) {
    summary_.label_max = std::max(
        summary_.label_max, static_cast<int64_t>(values_[summary_.features]));
  }
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

class CsvDataset : public Dataset {
 public:
  int64_t size() const override { return size_; }
  const std::vector<int64_t>& sample_shape() const override { return shape_; }
  int64_t label_count() const override { return label_count_; }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    const int64_t features = summary_.features;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = kept_.empty() ? rows[i] : kept_[rows[i]];
      const float* record = cache_->record(row);
      float* out = inputs + i * features;
      if (normalise_) {
        for (int64_t f = 0; f < features; ++f) {
          out[f] = (record[f] - mean_[f]) / std_[f];
        }
      } else {
        std::copy(record, record + features, out);
      }
      labels[i] = record[features];
    }
  }
  std::string Describe() const override { return describe_; }

 private:
  friend absl::StatusOr<std::unique_ptr<Dataset>> runtime::OpenCsvDataset(
      const std::string&, const DataBinding&, const DataOpenOptions&);

  // The steps of OpenCsvDataset, in order. `source` is "csv file FILE".
  // The cache found at one of `places`, else built at the first writable
  // one; true when built.
  absl::StatusOr<bool> LoadCache(const std::string& file,
                                 const DataBinding& binding,
                                 const std::vector<std::string>& places,
                                 uint64_t key);
  absl::Status BindValues(const DataBinding& binding,
                          const std::string& source);
  // This board's rows and classes; the shard's words for Describe().
  absl::StatusOr<std::string> Partition(const DataBinding& binding,
                                        const PartitionSpec* partition,
                                        const std::string& source);
  void SetDescription(const std::string& file, const std::string& beside,
                      const DataBinding& binding, bool partitioned,
                      const std::string& shard, bool built);

  std::unique_ptr<RowCache> cache_;
  CsvSummary summary_;
  std::vector<int64_t> kept_;  // partitioned only; empty: every row
  int64_t size_ = 0;
  std::vector<int64_t> shape_;
  int64_t label_count_ = 0;
  bool normalise_ = false;
  std::vector<float> mean_, std_;  // one per feature
  std::string describe_;
};

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

absl::StatusOr<bool> CsvDataset::LoadCache(
    const std::string& file, const DataBinding& binding,
    const std::vector<std::string>& places, uint64_t key) {
  std::optional<CsvSummary> summary;
  cache_ = FindRowCache(places, key, [&](const RowCache& c) {
    if (c.type() != RowValueType::kFloat32) return false;
    summary = DecodeSummary(c);
    return summary.has_value();
  });
  const bool built = cache_ == nullptr;
  if (built) {
    FEDBERRY_ASSIGN_OR_RETURN(cache_, BuildCache(file, binding, places, key));
    summary = DecodeSummary(*cache_);
    if (!summary) {
      return absl::InternalError(
          absl::StrCat("row cache ", cache_->path(), " lost its summary"));
    }
  }
  summary_ = *summary;
  return built;
}

absl::Status CsvDataset::BindValues(const DataBinding& binding,
                                    const std::string& source) {
  const int64_t features = summary_.features;
  if (binding.input_shape.empty()) {
    shape_ = {features};
  } else {
    int64_t product = 1;
    for (int64_t d : binding.input_shape) product = d > 0 ? product * d : -1;
    if (product != features) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": the input shape ", absl::StrJoin(binding.input_shape, ","),
          " holds ", product < 0 ? std::string("no") : absl::StrCat(product),
          " values, but ", features, " feature columns are selected"));
    }
    shape_ = binding.input_shape;
  }
  FEDBERRY_ASSIGN_OR_RETURN(
      mean_, PerUnit(binding.mean, 0.0f, features, "mean", "feature", source));
  FEDBERRY_ASSIGN_OR_RETURN(
      std_, PerUnit(binding.std, 1.0f, features, "std", "feature", source));
  normalise_ = !binding.mean.empty() || !binding.std.empty();
  return absl::OkStatus();
}

absl::StatusOr<std::string> CsvDataset::Partition(
    const DataBinding& binding, const PartitionSpec* partition,
    const std::string& source) {
  const int64_t features = summary_.features;
  const int64_t total = cache_->rows();
  const bool classification = binding.task == TaskKind::kClassification;
  if (partition == nullptr) {
    size_ = total;
    if (classification) label_count_ = summary_.label_max + 1;
    return std::string();
  }
  std::vector<uint8_t> labels(total, 0);
  if (partition->kind == PartitionSpec::Kind::kDirichlet) {
    if (!classification || summary_.label_max >= 256) {
      return absl::InvalidArgumentError(absl::StrCat(
          source,
          ": a Dirichlet partition needs classification "
          "labels below 256",
          classification
              ? absl::StrCat(" (the largest is ", summary_.label_max, ")")
              : std::string(" (the task is regression)")));
    }
    for (int64_t r = 0; r < total; ++r) {
      labels[r] = static_cast<uint8_t>(cache_->record(r)[features]);
    }
  }
  absl::StatusOr<std::vector<int64_t>> kept = PartitionRows(labels, *partition);
  if (!kept.ok())
    return base::WithPrefix(kept.status(), absl::StrCat(source, ": "));
  kept_ = *std::move(kept);
  size_ = static_cast<int64_t>(kept_.size());
  if (classification) {
    int64_t max = -1;
    for (int64_t r : kept_) {
      max = std::max(max, static_cast<int64_t>(cache_->record(r)[features]));
    }
    label_count_ = max + 1;
  }
  return ShardText(*partition);
}

void CsvDataset::SetDescription(const std::string& file,
                                const std::string& beside,
                                const DataBinding& binding, bool partitioned,
                                const std::string& shard, bool built) {
  const int64_t features = summary_.features;
  // Beside the file the cache is named by its file name only; elsewhere by
  // its whole path, so an operator can find it.
  const std::string cache_name =
      cache_->path() == beside
          ? std::filesystem::path(beside).filename().string()
          : cache_->path();
  std::string& d = describe_;
  d = absl::StrCat("csv ", file, ": ");
  if (partitioned) absl::StrAppend(&d, size_, " of ");
  absl::StrAppend(&d, cache_->rows(), " rows", shard, ", ", features,
                  features == 1 ? " feature, " : " features, ");
  if (binding.task == TaskKind::kClassification) {
    absl::StrAppend(&d, "label ", Quote(summary_.label_name), ", ",
                    label_count_, " classes");
  } else {
    absl::StrAppend(&d, "regression target ", Quote(summary_.label_name));
  }
  absl::StrAppend(&d, " (binary cache ", cache_name,
                  built ? ", built)" : ", reused)");
  if (summary_.skipped > 0) {
    absl::StrAppend(&d, "; skipped ", summary_.skipped, " bad ",
                    summary_.skipped == 1 ? "row" : "rows",
                    " (first: ", summary_.first_skip, ")");
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Dataset>> OpenCsvDataset(
    const std::string& file, const DataBinding& binding,
    const DataOpenOptions& options) {
  const std::string source = absl::StrCat("csv file ", file);
  FEDBERRY_RETURN_IF_ERROR(CheckNormalisation(binding, source));
  FEDBERRY_ASSIGN_OR_RETURN(const struct stat st, StatCsvFile(file));
  const uint64_t key = CsvCacheKey(file, st, binding);
  const std::vector<std::string> places =
      CsvCachePlaces(file, key, options.cache_dir);
  auto data = std::make_unique<CsvDataset>();
  FEDBERRY_ASSIGN_OR_RETURN(const bool built,
                            data->LoadCache(file, binding, places, key));
  FEDBERRY_RETURN_IF_ERROR(data->BindValues(binding, source));
  FEDBERRY_ASSIGN_OR_RETURN(
      const std::string shard,
      data->Partition(binding, options.partition, source));
  data->SetDescription(file, places[0], binding, options.partition != nullptr,
                       shard, built);
  return data;
}

}  // namespace fedberry::runtime
