#include "runtime/csv_parse.h"

#include <csv.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace fedberry::runtime {
namespace {

constexpr size_t kChunkBytes = 64 << 10;
// libcsv buffers a field until it ends; an unclosed quote would otherwise
// pull the rest of a large file into memory.
constexpr size_t kMaxFieldBytes = 16 << 20;
// Labels are stored as float32, exact up to 2^24.
constexpr double kMaxClassLabel = 16777216.0;

std::string QuoteNames(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(QuoteCsvText(n));
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

}  // namespace

std::string QuoteCsvText(std::string_view field) {
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
                       QuoteCsvText(header_[i]), " twice"));
    }
  }
  auto find = [&](const std::string& name, int* out) {
    auto it = index.find(name);
    if (it == index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "csv file ", file_, " has no column ", QuoteCsvText(name),
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
            absl::StrCat("csv file ", file_, ": column ", QuoteCsvText(name),
                         " is both the label and a feature"));
      }
      if (!seen.insert(column).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("csv file ", file_, ": feature column ",
                         QuoteCsvText(name), " is selected twice"));
      }
      features.push_back(column);
    }
  }
  if (features.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "csv file ", file_, " has no feature columns besides the label ",
        QuoteCsvText(header_[label]), "; its header has ",
        QuoteNames(header_)));
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
                            QuoteCsvText(header_[column_]), ": ", what);
  };
  // Debian's Abseil has its own string_view, not std's.
  const absl::string_view text(field.data(), field.size());
  double v;
  if (!absl::SimpleAtod(text, &v)) {
    // SimpleAtod already allows surrounding spaces.
    fail(absl::StripAsciiWhitespace(text).empty()
             ? std::string("the value is empty")
             : absl::StrCat(QuoteCsvText(field), " is not a number"));
    return;
  }
  if (!std::isfinite(v)) {
    fail(absl::StrCat(QuoteCsvText(field), " is not a finite number"));
    return;
  }
  if (std::fabs(v) > FLT_MAX) {
    fail(absl::StrCat(QuoteCsvText(field), " is outside the float32 range"));
    return;
  }
  if (is_label && binding_.task == TaskKind::kClassification) {
    if (v < 0 || v != std::floor(v)) {
      fail(absl::StrCat("class label ", QuoteCsvText(field),
                        " is not a non-negative integer"));
      return;
    }
    if (v > kMaxClassLabel) {
      fail(absl::StrCat("class label ", QuoteCsvText(field), " is above ",
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
                      QuoteCsvText(header_[column_]), ")");
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

}  // namespace fedberry::runtime
