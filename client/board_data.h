// A board's training data as its flags name it (--data=SPEC, its shard, the
// fleet emulation's fraction), opened for each plan the board binds to.
// Thread-safety: the opener is called from the agent's thread only.
#ifndef FEDBERRY_CLIENT_BOARD_DATA_H_
#define FEDBERRY_CLIENT_BOARD_DATA_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/plan_trainer.h"
#include "runtime/partition.h"

namespace fedberry::client {

struct BoardDataOptions {
  std::string spec;  // idx:DIR, csv:FILE, images:DIR, or a bare IDX folder
  runtime::PartitionSpec partition;
  double fraction = 1.0;  // keep this share of the shard (idx only)
  std::string cache_dir;  // for derived files the source's folder cannot take
};

// Checks the spec and that its file or folder exists now (so a typo fails
// at start, not at the first plan); IDX files are loaded here once.
// InvalidArgument / NotFound naming what is wrong.
absl::StatusOr<DataOpener> MakeBoardDataOpener(const BoardDataOptions& options);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_BOARD_DATA_H_
