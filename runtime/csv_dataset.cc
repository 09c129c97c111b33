#include "runtime/csv_dataset.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/binding_values.h"
#include "runtime/csv_row_cache.h"

namespace fedberry::runtime {
namespace {

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
  void TakeRows(CsvRows rows);
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

void CsvDataset::TakeRows(CsvRows rows) {
  cache_ = std::move(rows.cache);
  summary_ = std::move(rows.summary);
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
    absl::StrAppend(&d, "label ", QuoteCsvText(summary_.label_name), ", ",
                    label_count_, " classes");
  } else {
    absl::StrAppend(&d, "regression target ",
                    QuoteCsvText(summary_.label_name));
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
  FEDBERRY_ASSIGN_OR_RETURN(CsvRows rows,
                            OpenCsvRows(file, binding, options.cache_dir));
  const std::string beside = rows.beside;
  const bool built = rows.built;
  auto data = std::make_unique<CsvDataset>();
  data->TakeRows(std::move(rows));
  FEDBERRY_RETURN_IF_ERROR(data->BindValues(binding, source));
  FEDBERRY_ASSIGN_OR_RETURN(
      const std::string shard,
      data->Partition(binding, options.partition, source));
  data->SetDescription(file, beside, binding, options.partition != nullptr,
                       shard, built);
  return data;
}

}  // namespace fedberry::runtime
