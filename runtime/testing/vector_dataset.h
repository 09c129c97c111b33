// A Dataset over values held in vectors, for tests of what sits above the
// data seam (training, objectives, plans) without files.
#ifndef FEDBERRY_RUNTIME_TESTING_VECTOR_DATASET_H_
#define FEDBERRY_RUNTIME_TESTING_VECTOR_DATASET_H_

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/dataset.h"

namespace fedberry::runtime::testing {

class VectorDataset : public Dataset {
 public:
  // `inputs` holds labels.size() samples of product(shape) values each.
  VectorDataset(std::vector<int64_t> shape, std::vector<float> inputs,
                std::vector<float> labels, int64_t label_count)
      : shape_(std::move(shape)),
        inputs_(std::move(inputs)),
        labels_(std::move(labels)),
        label_count_(label_count) {}

  int64_t size() const override { return labels_.size(); }
  const std::vector<int64_t>& sample_shape() const override { return shape_; }
  int64_t label_count() const override { return label_count_; }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    const int64_t values = SampleValues();
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(inputs + i * values, inputs_.data() + rows[i] * values,
                  values * sizeof(float));
      labels[i] = labels_[rows[i]];
    }
  }
  std::string Describe() const override {
    return absl::StrCat("vector data (", size(), " samples)");
  }

 private:
  std::vector<int64_t> shape_;
  std::vector<float> inputs_;
  std::vector<float> labels_;
  int64_t label_count_;
};

// `rows` samples of `features` Gaussian values whose class (0..classes-1)
// shifts the mean of feature class % features: learnable in a few steps.
inline VectorDataset Blobs(int64_t rows, int64_t features, int64_t classes,
                           uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0, 0.5f);
  std::vector<float> x, y;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t c = static_cast<int64_t>(rng() % classes);
    for (int64_t f = 0; f < features; ++f) {
      x.push_back(noise(rng) + (f == c % features ? 2.0f : 0.0f));
    }
    y.push_back(static_cast<float>(c));
  }
  return VectorDataset({features}, std::move(x), std::move(y), classes);
}

}  // namespace fedberry::runtime::testing

#endif  // FEDBERRY_RUNTIME_TESTING_VECTOR_DATASET_H_
