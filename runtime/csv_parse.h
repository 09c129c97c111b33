// The parse of a CSV file of numeric rows (libcsv, a chunk at a time): the
// header row names the columns, the binding picks the label and feature
// columns by name, and each selected value must be a finite float32 (a
// classification label a non-negative integer). Lines are counted so each
// bad row is named by its 1-based line and column. csv_row_cache.h keeps
// what it reads; csv_dataset.h serves it.
// Thread-safety: a CsvParse is one parse on one thread; QuoteCsvText is
// pure.
#ifndef FEDBERRY_RUNTIME_CSV_PARSE_H_
#define FEDBERRY_RUNTIME_CSV_PARSE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/dataset.h"

namespace fedberry::runtime {

// What a parse learns besides the rows; the row cache keeps it beside the
// records, so a reused cache needs no parsing to describe itself.
struct CsvSummary {
  int64_t features = 0;
  std::string label_name;
  int64_t label_max = -1;  // classification; -1 for regression
  int64_t skipped = 0;
  std::string first_skip;  // "line 17, column ...", without the file
};

// A field or name as quoted in messages: cut short (at a UTF-8 character
// boundary), with quotes, backslashes and control bytes escaped so a message
// stays one line; other UTF-8 text is kept readable.
std::string QuoteCsvText(std::string_view field);

// The parse: libcsv calls OnField per field and OnRecord per record end; this
// holds what they need. Line numbers are counted here (libcsv has none):
// every record terminator ends a physical line, except the LF of a CRLF, and
// line breaks inside quoted fields count too.
class CsvParse {
 public:
  // Called once, when the header's columns are chosen (the summary then
  // has the feature count and the label's name); an error ends the parse.
  using HeaderFn = std::function<absl::Status(const CsvSummary&)>;
  // Called per good row: the features, then the label (features + 1
  // values); an error ends the parse.
  using RowFn = std::function<absl::Status(const float*)>;

  // `file` and `binding` must outlive the parse.
  CsvParse(const std::string& file, const DataBinding& binding,
           HeaderFn on_header, RowFn on_row)
      : file_(file),
        binding_(binding),
        on_header_(std::move(on_header)),
        on_row_(std::move(on_row)) {}

  // Reads the whole file through libcsv, chunk by chunk. NotFound for a
  // missing file; InvalidArgument for one that cannot be read, is empty or
  // header-only, names an unknown or duplicate column, or (without
  // binding.skip_bad_rows) has a bad row, or whose rows were all skipped;
  // ResourceExhausted when libcsv fails; else the callbacks' errors.
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

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_CSV_PARSE_H_
