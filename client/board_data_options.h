// Where a board's training data is (--data=SPEC, its shard, the cache
// folder): what MakeBoardDataOpener (board_data.h) opens. No LibTorch.
// Thread-safety: a plain value.
#ifndef FEDBERRY_CLIENT_BOARD_DATA_OPTIONS_H_
#define FEDBERRY_CLIENT_BOARD_DATA_OPTIONS_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "runtime/image_dataset.h"
#include "runtime/partition.h"

namespace fedberry::client {

struct BoardDataOptions {
  std::string spec;  // idx:DIR, csv:FILE, images:DIR, or a bare IDX folder
  runtime::PartitionSpec partition;
  std::string cache_dir;  // for derived files the source's folder cannot take
  // Applied to an IDX shard once loaded (the simulator's emulated boards
  // keep part of it); empty: the shard as loaded. Not called for other
  // sources.
  std::function<absl::Status(runtime::ImageDataset&)> edit_idx_shard;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_BOARD_DATA_OPTIONS_H_
