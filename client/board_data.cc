#include "client/board_data.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "runtime/dataset.h"

namespace fedberry::client {

absl::StatusOr<DataOpener> MakeBoardDataOpener(
    const BoardDataOptions& options) {
  absl::StatusOr<runtime::DataSpec> spec = runtime::ParseDataSpec(options.spec);
  if (!spec.ok()) return spec.status();
  std::error_code ec;
  if (!std::filesystem::exists(spec->path, ec)) {
    return absl::NotFoundError(absl::StrCat("--data=", options.spec, ": ",
                                            spec->path, " does not exist"));
  }
  if (spec->kind == "idx") {
    absl::StatusOr<runtime::ImageDataset> images = runtime::LoadIdxDataset(
        spec->path, runtime::Split::kTrain, &options.partition);
    if (!images.ok()) return images.status();
    if (options.edit_idx_shard) {
      if (absl::Status s = options.edit_idx_shard(*images); !s.ok()) return s;
    }
    spdlog::info("loaded shard {}/{}: {} images from {}",
                 options.partition.index, options.partition.count, images->rows,
                 spec->path);
    return ImagesOpener(*std::move(images));
  }
  return [options](const runtime::DataBinding& binding)
             -> absl::StatusOr<std::unique_ptr<runtime::Dataset>> {
    runtime::DataOpenOptions open;
    open.cache_dir = options.cache_dir;
    open.partition = &options.partition;
    absl::StatusOr<std::unique_ptr<runtime::Dataset>> data =
        runtime::OpenDataset(options.spec, binding, open);
    if (data.ok()) {
      spdlog::info("shard {}/{} of {}", options.partition.index,
                   options.partition.count, (*data)->Describe());
    }
    return data;
  };
}

}  // namespace fedberry::client
