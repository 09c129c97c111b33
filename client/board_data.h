// A board's training data as its flags name it (--data=SPEC, its shard),
// opened for each plan the board binds to.
// Thread-safety: the opener is called from the agent's thread only.
#ifndef FEDBERRY_CLIENT_BOARD_DATA_H_
#define FEDBERRY_CLIENT_BOARD_DATA_H_

#include "absl/status/statusor.h"
#include "client/board_data_options.h"
#include "client/plan_trainer.h"

namespace fedberry::client {

// Checks the spec and that its file or folder exists now (so a typo fails
// at start, not at the first plan); IDX files are loaded here once.
// InvalidArgument / NotFound naming what is wrong.
absl::StatusOr<DataOpener> MakeBoardDataOpener(const BoardDataOptions& options);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_BOARD_DATA_H_
