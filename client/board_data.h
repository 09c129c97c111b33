// A board's training data as its flags name it (--data=SPEC, its shard),
// opened for each plan the board binds to.
// Thread-safety: the opener is called from the agent's thread only.
#ifndef FEDBERRY_CLIENT_BOARD_DATA_H_
#define FEDBERRY_CLIENT_BOARD_DATA_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "client/plan_trainer.h"
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

// Checks the spec and that its file or folder exists now (so a typo fails
// at start, not at the first plan); IDX files are loaded here once.
// InvalidArgument / NotFound naming what is wrong.
absl::StatusOr<DataOpener> MakeBoardDataOpener(const BoardDataOptions& options);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_BOARD_DATA_H_
