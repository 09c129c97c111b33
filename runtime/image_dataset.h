// An image classification data set held as uint8 pixels and labels, and its
// loader for Fashion-MNIST / MNIST IDX files. Images stay uint8 in memory
// (a quarter of float32); the trainer converts one batch at a time.
// Thread-safe: an ImageDataset is immutable once loaded.
#ifndef FEDBERRY_RUNTIME_IMAGE_DATASET_H_
#define FEDBERRY_RUNTIME_IMAGE_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/partition.h"

namespace fedberry::runtime {

struct ImageDataset {
  int64_t rows = 0;
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;  // rows * height * width
  std::vector<uint8_t> labels;  // rows
};

enum class Split { kTrain, kTest };

// Default location of Debian's dataset-fashion-mnist package.
inline constexpr char kDefaultFashionMnistDir[] =
    "/usr/share/datasets/fashion-mnist";

// Path of a split's images or labels file in `dir`: the .gz file, or the
// unpacked one when only that exists.
std::string IdxPath(const std::string& dir, Split split, bool images);

// Loads a split from `dir`. With `partition`, reads the labels, computes the
// shard and keeps only its rows. Errors name the file and what is wrong:
// NotFound for a missing file, InvalidArgument for malformed content or when
// images and labels disagree in count.
absl::StatusOr<ImageDataset> LoadIdxDataset(
    const std::string& dir, Split split,
    const PartitionSpec* partition = nullptr);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_IMAGE_DATASET_H_
