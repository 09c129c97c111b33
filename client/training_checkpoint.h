// A client's training state as a checkpoint: the model (parameters and
// buffers), the optimizer state (momentum buffers), LibTorch's RNG state, and
// a small state record (state.json: round, task, model, plan fingerprint,
// data order seed, the
// training cursor, whether local training finished). Enough to continue a
// killed local training run exactly where its last checkpoint was.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_TRAINING_CHECKPOINT_H_
#define FEDBERRY_CLIENT_TRAINING_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint_store.h"
#include "runtime/model.h"
#include "runtime/trainer.h"

namespace fedberry::client {

struct TrainingSnapshot {
  uint64_t round = 0;
  std::string task_id;
  std::string model;  // runtime::ModelIdOf the plan, e.g. "lenet5"
  // runtime::PlanFingerprint of the plan it trained under; empty in
  // checkpoints written before plans were fingerprinted.
  std::string plan;
  uint64_t data_seed = 0;  // TrainOptions::seed of the run
  // Local differential privacy: seeds the round's noise, so a re-push after
  // a kill sends the very update the first push did (fresh noise would be
  // a second release of the same data).
  uint64_t noise_seed = 0;
  runtime::TrainCursor cursor;
  bool finished = false;  // local training is complete; only the push is left
  // Top-k error feedback (runtime/update_encoding.h): what earlier rounds
  // left unsent, carried into this round, and, once training finished and
  // the update was encoded, what this round leaves for the next. Empty
  // without top-k updates.
  runtime::NamedTensors residual;
  runtime::NamedTensors residual_next;
};

// The checkpoint files of a run at `snapshot`. `optimizer` may be null when
// training finished. Internal when LibTorch cannot serialize.
absl::StatusOr<std::vector<checkpoint::CheckpointFile>>
EncodeTrainingCheckpoint(const TrainingSnapshot& snapshot,
                         runtime::Model& model,
                         torch::optim::Optimizer* optimizer);

// The state record of `loaded`, with its residuals. DataLoss when it is
// missing or malformed.
absl::StatusOr<TrainingSnapshot> DecodeTrainingSnapshot(
    const checkpoint::LoadedCheckpoint& loaded);

// Restore parts of `loaded` into live objects. DataLoss when a file is
// missing or does not fit (wrong model).
absl::Status RestoreModel(const checkpoint::LoadedCheckpoint& loaded,
                          runtime::Model& model);
absl::Status RestoreOptimizer(const checkpoint::LoadedCheckpoint& loaded,
                              torch::optim::Optimizer& optimizer);
absl::Status RestoreRng(const checkpoint::LoadedCheckpoint& loaded);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_TRAINING_CHECKPOINT_H_
