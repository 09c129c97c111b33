// The data seam: a board's training data (or the server's evaluation data),
// whatever its format, as numbered samples of one fixed shape with a label.
// Sources (IDX files, CSV rows, image folders) live behind it; everything
// above runtime/ speaks only Dataset and DataBinding, so no image size or
// class count is known outside a source. Kept free of LibTorch: the trainer
// turns the floats a source writes into tensors one batch at a time.
// Thread-safety: a Dataset is immutable once opened; const calls may run
// concurrently.
#ifndef FEDBERRY_RUNTIME_DATASET_H_
#define FEDBERRY_RUNTIME_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/image_dataset.h"
#include "runtime/partition.h"

namespace fedberry::runtime {

enum class TaskKind { kClassification, kRegression };

// "classification" / "regression". InvalidArgument otherwise.
absl::StatusOr<TaskKind> ParseTaskKind(const std::string& name);
const char* TaskKindName(TaskKind kind);

// What the job's plan says about data: every board reads its source the same
// way.
struct DataBinding {
  // One sample's shape, e.g. {1, 28, 28} or {12}. Image sources resize to
  // it; row sources check it against the feature count. Empty: the source's
  // own shape (IDX: {1, H, W}; CSV: {features}).
  std::vector<int64_t> input_shape;
  TaskKind task = TaskKind::kClassification;
  // (x - mean) / std per channel (images) or per feature (rows), after
  // pixels became floats in [0, 1]. Empty: no normalisation. One value
  // applies to every channel / feature.
  std::vector<float> mean;
  std::vector<float> std;
  std::string label_column;                  // csv; empty: the last column
  std::vector<std::string> feature_columns;  // csv; empty: all but the label
  // csv: skip malformed rows (and count them) instead of refusing the file.
  bool skip_bad_rows = false;
};

// Where a source may keep what it derives from the user's files (a compact
// binary copy of a CSV, decoded images), and which share of them to use.
struct DataOpenOptions {
  // Tried when the folder beside the source cannot be written. Empty: only
  // beside the source.
  std::string cache_dir;
  // This board's shard (nullptr: the whole source).
  const PartitionSpec* partition = nullptr;
  // IDX only: which split a folder's files are read from.
  Split split = Split::kTrain;
};

class Dataset {
 public:
  virtual ~Dataset() = default;

  // Samples (after partitioning).
  virtual int64_t size() const = 0;
  // One sample's shape; product(sample_shape()) floats per sample.
  virtual const std::vector<int64_t>& sample_shape() const = 0;
  // For classification: the number of classes the source knows (IDX: the
  // largest label + 1; image folders: the sub-folders; CSV: the largest
  // label + 1). 0 for regression.
  virtual int64_t label_count() const = 0;
  // Writes samples rows[0..n) as floats, normalised per the binding:
  // n * SampleValues() values into `inputs`, n labels into `labels`
  // (class indices as floats for classification, targets for regression).
  // Rows must be in [0, size()).
  virtual void Read(const int64_t* rows, int64_t n, float* inputs,
                    float* labels) const = 0;
  // For logs: "csv rows.csv (1200 rows, 12 features)".
  virtual std::string Describe() const = 0;
  // Data moves: this source's samples as fixed-size encoded rows (today
  // uint8 images), or nullptr when it cannot lend samples.
  virtual const ImageDataset* lendable() const { return nullptr; }

  int64_t SampleValues() const;
};

// Opens a data source named by SPEC: "idx:DIR", "csv:FILE", "images:DIR", or
// a bare folder (read as idx). Errors name the spec or the file and what is
// wrong (NotFound, InvalidArgument).
absl::StatusOr<std::unique_ptr<Dataset>> OpenDataset(
    const std::string& spec, const DataBinding& binding,
    const DataOpenOptions& options = {});

// The kind ("idx", "csv", "images") and path of a spec. InvalidArgument for
// an unknown kind or an empty path.
struct DataSpec {
  std::string kind;
  std::string path;
};
absl::StatusOr<DataSpec> ParseDataSpec(const std::string& spec);

// Per-channel (images: shape {C, ...}) or per-feature (shape {F}) mean and
// standard deviation of `data`'s inputs as read (so open it without
// normalisation). A zero deviation becomes 1.
struct InputStats {
  std::vector<float> mean;
  std::vector<float> std;
};
InputStats ComputeInputStats(const Dataset& data);

// A Dataset over in-memory uint8 images (IDX, moved samples): pixels / 255,
// then the binding's normalisation; shape {1, H, W}. Lends its samples.
std::unique_ptr<Dataset> MakeImageRowsDataset(ImageDataset images,
                                              const DataBinding& binding);
// The same over shared images (no copy).
std::unique_ptr<Dataset> MakeImageRowsDataset(
    std::shared_ptr<const ImageDataset> images, const DataBinding& binding);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_DATASET_H_
