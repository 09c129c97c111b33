// A data source over a folder of images with one sub-folder per class
// ("images:DIR", torchvision's ImageFolder layout). Class k is the k-th
// sub-folder name in byte-wise order, so every board maps names to
// 0..K-1 alike. Images (.png, .jpg, .jpeg) are decoded once with stb,
// resized to the binding's C x H x W and kept as uint8 channel-planar
// records in a row cache inside DIR (runtime/row_cache.h), which later opens
// reuse without decoding; reads go to the memory-mapped cache.
// Thread-safety: OpenImageFolderDataset has no shared state; the Dataset it
// returns is immutable, its const calls may run concurrently.
#ifndef FEDBERRY_RUNTIME_IMAGE_FOLDER_DATASET_H_
#define FEDBERRY_RUNTIME_IMAGE_FOLDER_DATASET_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/dataset.h"

namespace fedberry::runtime {

// Opens `dir`. binding.input_shape must be {C, H, W} with C 1 (grayscale;
// colour images are converted) or 3 (RGB; grayscale is replicated); images
// of another size are resized. Samples read as pixels / 255, then the
// binding's per-channel mean/std (one value: every channel). Sub-folders and
// files starting with '.' and files of other extensions are skipped; an
// empty class folder still counts as a class.
//
// The cache is DIR/.fedberry-<key>.rows, keyed by DIR's path, the sorted file
// list with sizes and mtimes, and the shape; when DIR cannot be written it
// goes to options.cache_dir. Errors: NotFound for a missing DIR;
// InvalidArgument for a wrong input_shape, a regression task, no class
// folders or no images, a file that does not decode (naming it and stb's
// reason), a mean/std that is neither one value nor one per channel, or a
// Dirichlet partition over 256 classes or more; PermissionDenied when no
// cache place can be written.
absl::StatusOr<std::unique_ptr<Dataset>> OpenImageFolderDataset(
    const std::string& dir, const DataBinding& binding,
    const DataOpenOptions& options);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_IMAGE_FOLDER_DATASET_H_
