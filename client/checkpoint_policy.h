// When a board saves its training state (--checkpoint_every_batches,
// --checkpoint_every): PlanTrainer follows it, ClientConfig carries it.
// Thread-safety: a plain value.
#ifndef FEDBERRY_CLIENT_CHECKPOINT_POLICY_H_
#define FEDBERRY_CLIENT_CHECKPOINT_POLICY_H_

#include <cstdint>

#include "absl/time/time.h"

namespace fedberry::client {

struct CheckpointPolicy {
  int64_t every_batches = 100;               // 0: never by count
  absl::Duration every = absl::Seconds(60);  // zero: never by time
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CHECKPOINT_POLICY_H_
