// A board's training checkpoints as one trainer keeps them: the newest
// valid one found at start (logged, and handed once to the run it belongs
// to; a closed task's, or one made under another plan, is dropped), and the
// saves a run asks for (by the CheckpointPolicy, at a memory release, at
// the end of local training), counted. A failed save is logged and training
// goes on; the previous checkpoint stays the newest. What a checkpoint
// holds is client/training_checkpoint.h's.
// Thread-safety: not thread-safe (its trainer's thread).
#ifndef FEDBERRY_CLIENT_CHECKPOINT_KEEPER_H_
#define FEDBERRY_CLIENT_CHECKPOINT_KEEPER_H_

#include <memory>
#include <optional>
#include <utility>

#include "absl/time/time.h"
#include "base/clock.h"
#include "checkpoint/checkpoint_store.h"
#include "client/checkpoint_policy.h"
#include "client/training_checkpoint.h"
#include "runtime/model.h"
#include "runtime/trainer.h"

namespace fedberry::client {

class CheckpointKeeper {
 public:
  // `store` may be null: no checkpoints (nothing is found, saved or due).
  // Reads the store once, here, for a state to resume. Times by `clock`.
  CheckpointKeeper(std::unique_ptr<checkpoint::CheckpointStore> store,
                   CheckpointPolicy policy, Clock& clock);

  bool enabled() const { return store_ != nullptr; }

  // The top-k leftovers of the checkpoint found at start, for the next run
  // (a finished round's leftovers; an unfinished one's, what it started
  // with); empty without one. Moved out: once.
  runtime::NamedTensors TakeFoundResidual() {
    return std::move(found_residual_);
  }

  // The checkpoint found at start (moved into `resume`, once) and its state
  // when it belongs to the run `snapshot` describes; otherwise nullopt,
  // logging why it is dropped.
  std::optional<TrainingSnapshot> TakeResumable(
      const TrainingSnapshot& snapshot,
      std::optional<checkpoint::LoadedCheckpoint>& resume);
  // The job is over: the checkpoint found at start is resumed by no run.
  void DropFound();

  // Whether the policy asks for a save after the batch `cursor` ends (by
  // count, or by time since `last_save`); never at the last batch, whose
  // finished state Finish saves.
  bool Due(const runtime::TrainCursor& cursor, absl::Time last_save) const;
  // Saves `snapshot` with `model` and (unless null: a finished run)
  // `optimizer`. Requires enabled().
  void Save(const TrainingSnapshot& snapshot, runtime::Model& model,
            torch::optim::Optimizer* optimizer);

  int written() const { return written_; }
  int failed() const { return failed_; }

 private:
  std::unique_ptr<checkpoint::CheckpointStore> store_;
  CheckpointPolicy policy_;
  Clock& clock_;
  std::optional<checkpoint::LoadedCheckpoint> found_;
  runtime::NamedTensors found_residual_;
  int written_ = 0;
  int failed_ = 0;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CHECKPOINT_KEEPER_H_
