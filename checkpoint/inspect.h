// What fedberry-ckpt prints: an operator's view of a checkpoint folder (list,
// verify, show), as text or JSON. Reads through the checkpoint store, so it
// verifies exactly what a resuming process would, and never needs LibTorch:
// what a checkpoint holds (round, step) comes from its state.json.
#ifndef FEDBERRY_CHECKPOINT_INSPECT_H_
#define FEDBERRY_CHECKPOINT_INSPECT_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "checkpoint/checkpoint_store.h"

namespace fedberry::checkpoint {

struct InspectOptions {
  bool json = false;  // one JSON document instead of text
};

// Every checkpoint, newest first: name, LATEST marker, size, whether every
// checksum verifies (or what is wrong), and what it holds. NotFound when
// `store`'s folder holds no checkpoint folder at all.
absl::Status ListCheckpoints(CheckpointStore& store, const InspectOptions& o,
                             std::ostream& out);

// Verifies every checkpoint (or only `name`), one line each. OK when all
// verify; DataLoss naming the bad ones otherwise (the newest valid one, which
// a resume would use, is named either way).
absl::Status VerifyCheckpoints(CheckpointStore& store, const std::string& name,
                               const InspectOptions& o, std::ostream& out);

// One checkpoint in detail (default: the one a resume would load): each
// file's size and checksum, and the state it holds.
absl::Status ShowCheckpoint(CheckpointStore& store, const std::string& name,
                            const InspectOptions& o, std::ostream& out);

}  // namespace fedberry::checkpoint

#endif  // FEDBERRY_CHECKPOINT_INSPECT_H_
