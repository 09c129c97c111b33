// What local training asks, at each batch boundary, of whoever watches the
// board's memory: how many micro-batches to split the next batch into, and
// whether to go on. The trainer knows nothing of /proc or pressure levels.
// Thread-safety: implementations are called from the training thread and
// must be safe against their own polling thread.
#ifndef FEDBERRY_CLIENT_TRAINING_GATE_H_
#define FEDBERRY_CLIENT_TRAINING_GATE_H_

#include <atomic>
#include <string>

#include "absl/status/status.h"

namespace fedberry::client {

class TrainingGate {
 public:
  virtual ~TrainingGate() = default;
  // Micro-batches for the next batch (1: the whole batch at once).
  virtual int micro_batches() = 0;
  // Called between batches. Blocks while training is paused (returning
  // early once `stop` is set). OK: go on. A status for which
  // IsMemoryRelease() holds: checkpoint now and stop, to free the memory.
  virtual absl::Status AtBatchBoundary(const std::atomic<bool>& stop) = 0;
  // Called with AtBatchBoundary's release status once the training state is
  // checkpointed. OK: the memory was released and the process came back
  // intact (a CRIU dump and restore), so training goes on from this
  // boundary. Otherwise the status to end with, to free the memory.
  virtual absl::Status Release(absl::Status release) { return release; }
  // Why the board should take on no extra work now (an evaluation it may
  // decline), e.g. training is paused under memory pressure; empty: none.
  virtual std::string BusyReason() { return ""; }
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_TRAINING_GATE_H_
