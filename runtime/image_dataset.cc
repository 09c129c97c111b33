#include "runtime/image_dataset.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/idx_reader.h"

namespace fedberry::runtime {

std::string IdxPath(const std::string& dir, Split split, bool images) {
  std::string base =
      absl::StrCat(dir, "/", split == Split::kTrain ? "train" : "t10k",
                   images ? "-images-idx3-ubyte" : "-labels-idx1-ubyte");
  std::string gz = base + ".gz";
  std::error_code ec;
  if (!std::filesystem::exists(gz, ec) && std::filesystem::exists(base, ec)) {
    return base;
  }
  return gz;
}

absl::StatusOr<ImageDataset> LoadIdxDataset(const std::string& dir, Split split,
                                            const PartitionSpec* partition) {
  const std::string label_path = IdxPath(dir, split, /*images=*/false);
  const std::string image_path = IdxPath(dir, split, /*images=*/true);
  FEDBERRY_ASSIGN_OR_RETURN(IdxArray labels, ReadIdx(label_path));
  if (labels.dims.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("labels file ", label_path,
                                                   " has ", labels.dims.size(),
                                                   " dimensions; expected 1"));
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<int64_t> image_dims,
                            ReadIdxDims(image_path));
  if (image_dims.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("images file ", image_path, " has ", image_dims.size(),
                     " dimensions; expected 3 (count, height, width)"));
  }
  if (image_dims[0] != labels.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat("images file ", image_path, " holds ", image_dims[0],
                     " images but labels file ", label_path, " holds ",
                     labels.rows(), " labels"));
  }
  ImageDataset out;
  std::vector<int64_t> rows;
  if (partition != nullptr) {
    FEDBERRY_ASSIGN_OR_RETURN(rows, PartitionRows(labels.data, *partition));
  }
  FEDBERRY_ASSIGN_OR_RETURN(IdxArray images,
                            ReadIdx(image_path, partition ? &rows : nullptr));
  out.rows = images.rows();
  out.height = images.dims[1];
  out.width = images.dims[2];
  out.pixels = std::move(images.data);
  if (partition != nullptr) {
    out.labels.reserve(rows.size());
    for (int64_t r : rows) out.labels.push_back(labels.data[r]);
  } else {
    out.labels = std::move(labels.data);
  }
  for (size_t i = 0; i < out.labels.size(); ++i) {
    if (out.labels[i] > 9) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels file ", label_path, " has label ",
                       static_cast<int>(out.labels[i]), " at row ", i,
                       "; expected classes 0 to 9"));
    }
  }
  return out;
}

}  // namespace fedberry::runtime
