// A data source over a CSV file of numeric rows ("csv:FILE"): a header row
// names the columns, the binding selects the label and feature columns by
// name. The file is parsed once, in chunks (libcsv: runtime/csv_parse.h),
// into a row cache beside it (runtime/csv_row_cache.h: float32 features then
// the label), which later opens reuse without parsing; reads go to the
// memory-mapped cache, so a CSV larger than RAM trains in bounded resident
// memory.
// Thread-safety: OpenCsvDataset has no shared state (two callers building
// one cache each write their own temporary file); the Dataset it returns is
// immutable, its const calls may run concurrently.
#ifndef FEDBERRY_RUNTIME_CSV_DATASET_H_
#define FEDBERRY_RUNTIME_CSV_DATASET_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/dataset.h"

namespace fedberry::runtime {

// Opens `file`. The binding's label_column (empty: the last column) and
// feature_columns (empty: every other column) pick columns by header name;
// unselected columns are never parsed (they may hold text). Every selected
// value must be a finite number; a classification label a non-negative
// integer ("3" or "3.0"). A bad row is an InvalidArgument naming the file,
// its 1-based line and the column (`rows.csv line 17, column "temp": "abc"
// is not a number`); with binding.skip_bad_rows it is skipped and counted,
// and Describe() reports the count and the first reason.
//
// The cache is `<file>.fedberry-<key>.rows`, keyed by the file's path, size
// and mtime and the binding's column choice, task and skip_bad_rows; when
// the file's folder cannot be written it goes to options.cache_dir. Errors:
// NotFound for a missing file; InvalidArgument for an empty or header-only
// file, an unknown or duplicate column, an input_shape whose product is not
// the feature count, a mean/std that is neither one value nor one per
// feature, or a Dirichlet partition of anything but classification labels
// below 256; PermissionDenied when no cache place can be written.
absl::StatusOr<std::unique_ptr<Dataset>> OpenCsvDataset(
    const std::string& file, const DataBinding& binding,
    const DataOpenOptions& options);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_CSV_DATASET_H_
