#include "runtime/dataset.h"

#include <cmath>
#include <functional>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/csv_dataset.h"
#include "runtime/image_folder_dataset.h"

namespace fedberry::runtime {

absl::StatusOr<TaskKind> ParseTaskKind(const std::string& name) {
  if (name == "classification") return TaskKind::kClassification;
  if (name == "regression") return TaskKind::kRegression;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown task '", name, "' (known: classification, regression)"));
}

const char* TaskKindName(TaskKind kind) {
  return kind == TaskKind::kRegression ? "regression" : "classification";
}

int64_t Dataset::SampleValues() const {
  const auto& shape = sample_shape();
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

absl::StatusOr<DataSpec> ParseDataSpec(const std::string& spec) {
  DataSpec out;
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) {
    out.kind = "idx";  // a bare folder: today's IDX files
    out.path = spec;
  } else {
    out.kind = spec.substr(0, colon);
    out.path = spec.substr(colon + 1);
  }
  if (out.kind != "idx" && out.kind != "csv" && out.kind != "images") {
    return absl::InvalidArgumentError(
        absl::StrCat("data spec '", spec, "': unknown kind '", out.kind,
                     "' (use idx:DIR, csv:FILE or images:DIR)"));
  }
  if (out.path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("data spec '", spec, "' names no file or folder"));
  }
  return out;
}

namespace {

class ImageRowsDataset : public Dataset {
 public:
  ImageRowsDataset(std::shared_ptr<const ImageDataset> images, float mean,
                   float std)
      : owned_(std::move(images)),
        images_(*owned_),
        shape_{1, images_.height, images_.width},
        mean_(mean),
        std_(std) {
    for (uint8_t l : images_.labels) {
      label_count_ = std::max<int64_t>(label_count_, int64_t{l} + 1);
    }
  }

  int64_t size() const override { return images_.rows; }
  const std::vector<int64_t>& sample_shape() const override { return shape_; }
  int64_t label_count() const override { return label_count_; }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    const int64_t pixels = images_.height * images_.width;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* src = images_.pixels.data() + rows[i] * pixels;
      float* dst = inputs + i * pixels;
      for (int64_t j = 0; j < pixels; ++j)
        dst[j] = (src[j] / 255.0f - mean_) / std_;
      labels[i] = images_.labels[rows[i]];
    }
  }
  std::string Describe() const override {
    return absl::StrCat(images_.rows, " images of ", images_.height, "x",
                        images_.width, ", ", label_count_, " classes");
  }
  const ImageDataset* lendable() const override { return &images_; }

 private:
  std::shared_ptr<const ImageDataset> owned_;
  const ImageDataset& images_;
  std::vector<int64_t> shape_;
  float mean_, std_;
  int64_t label_count_ = 0;
};

absl::StatusOr<std::unique_ptr<Dataset>> OpenIdx(const std::string& dir,
                                                 const DataBinding& binding,
                                                 const DataOpenOptions& opts) {
  if (binding.task != TaskKind::kClassification) {
    return absl::InvalidArgumentError(
        absl::StrCat("idx:", dir,
                     " holds class labels: the task must be "
                     "classification"));
  }
  absl::StatusOr<ImageDataset> images =
      LoadIdxDataset(dir, opts.split, opts.partition);
  if (!images.ok()) return images.status();
  const std::vector<int64_t> own = {1, images->height, images->width};
  if (!binding.input_shape.empty() && binding.input_shape != own) {
    return absl::InvalidArgumentError(
        absl::StrCat("idx:", dir, " holds samples of shape ",
                     absl::StrJoin(own, ","), "; the plan's input shape is ",
                     absl::StrJoin(binding.input_shape, ",")));
  }
  for (const auto* v : {&binding.mean, &binding.std}) {
    if (v->size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "idx:", dir, " has one channel; the plan normalises ", v->size()));
    }
  }
  return MakeImageRowsDataset(*std::move(images), binding);
}

}  // namespace

std::unique_ptr<Dataset> MakeImageRowsDataset(
    std::shared_ptr<const ImageDataset> images, const DataBinding& binding) {
  const float mean = binding.mean.empty() ? 0.0f : binding.mean[0];
  const float std = binding.std.empty() ? 1.0f : binding.std[0];
  return std::make_unique<ImageRowsDataset>(std::move(images), mean, std);
}

std::unique_ptr<Dataset> MakeImageRowsDataset(ImageDataset images,
                                              const DataBinding& binding) {
  return MakeImageRowsDataset(
      std::make_shared<const ImageDataset>(std::move(images)), binding);
}

absl::StatusOr<std::unique_ptr<Dataset>> OpenDataset(
    const std::string& spec, const DataBinding& binding,
    const DataOpenOptions& options) {
  absl::StatusOr<DataSpec> parsed = ParseDataSpec(spec);
  if (!parsed.ok()) return parsed.status();
  for (float s : binding.std) {
    if (!(s > 0) || !std::isfinite(s)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input std ", s, " is not a positive number"));
    }
  }
  for (float m : binding.mean) {
    if (!std::isfinite(m)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input mean ", m, " is not finite"));
    }
  }
  if (parsed->kind == "csv") {
    return OpenCsvDataset(parsed->path, binding, options);
  }
  if (parsed->kind == "images") {
    return OpenImageFolderDataset(parsed->path, binding, options);
  }
  return OpenIdx(parsed->path, binding, options);
}

InputStats ComputeInputStats(const Dataset& data) {
  const auto& shape = data.sample_shape();
  const int64_t channels = shape.empty() ? 1 : shape[0];
  const int64_t values = data.SampleValues();
  const int64_t per_channel = std::max<int64_t>(1, values / channels);
  std::vector<double> sum(channels, 0), sq(channels, 0);
  constexpr int64_t kBatch = 256;
  std::vector<int64_t> rows(kBatch);
  std::vector<float> inputs(kBatch * values), labels(kBatch);
  for (int64_t begin = 0; begin < data.size(); begin += kBatch) {
    const int64_t n = std::min(kBatch, data.size() - begin);
    std::iota(rows.begin(), rows.begin() + n, begin);
    data.Read(rows.data(), n, inputs.data(), labels.data());
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < channels; ++c) {
        const float* v = inputs.data() + i * values + c * per_channel;
        for (int64_t j = 0; j < per_channel; ++j) {
          sum[c] += v[j];
          sq[c] += static_cast<double>(v[j]) * v[j];
        }
      }
    }
  }
  InputStats out;
  const double count = static_cast<double>(data.size()) * per_channel;
  for (int64_t c = 0; c < channels; ++c) {
    const double mean = count > 0 ? sum[c] / count : 0;
    const double var =
        count > 0 ? std::max(0.0, sq[c] / count - mean * mean) : 0;
    const double std = std::sqrt(var);
    out.mean.push_back(static_cast<float>(mean));
    out.std.push_back(std > 1e-12 ? static_cast<float>(std) : 1.0f);
  }
  return out;
}

}  // namespace fedberry::runtime
