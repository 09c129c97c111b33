// A CSV file's rows as a row cache (runtime/row_cache.h: float32 features
// then the label, a record a row): found beside the file or in the cache
// folder when one of this file and binding is there, else parsed once
// (runtime/csv_parse.h) into the first place that can be written. The
// parse's summary is kept as the cache's metadata.
// Thread-safety: OpenCsvRows has no shared state (two callers building one
// cache each write their own temporary file, and one rename wins).
#ifndef FEDBERRY_RUNTIME_CSV_ROW_CACHE_H_
#define FEDBERRY_RUNTIME_CSV_ROW_CACHE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/csv_parse.h"
#include "runtime/dataset.h"
#include "runtime/row_cache.h"

namespace fedberry::runtime {

struct CsvRows {
  std::unique_ptr<RowCache> cache;
  CsvSummary summary;
  bool built = false;  // parsed now, not reused
  std::string beside;  // the cache's path beside the file (it may be elsewhere)
};

// The cache of `file` under `binding`: `<file>.fedberry-<key>.rows`, keyed
// by the file's path, size and mtime and the binding's column choice, task
// and skip_bad_rows, or the same name in `cache_dir` (may be empty: none)
// when the file's folder cannot be written. NotFound for a missing file;
// InvalidArgument for a folder or an unreadable file, and the parse's
// errors (CsvParse::Run); the writer's (PermissionDenied) when no place can
// be written; Internal when a cache just built cannot be read back.
absl::StatusOr<CsvRows> OpenCsvRows(const std::string& file,
                                    const DataBinding& binding,
                                    const std::string& cache_dir);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_CSV_ROW_CACHE_H_
