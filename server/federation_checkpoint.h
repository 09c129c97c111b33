// The server's federation state as a checkpoint: the global model
// (model.pt, a LibTorch archive of named tensors), the aggregation
// strategy's state when it keeps one (strategy.pt), and a state record
// (state.json: next round, model name, the job's training plan, client
// registry, every round's report). Written after each round; a restarted
// server continues from it when its plan is the same. The larger records
// of state.json are encoded in server/federation_state_json.h.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_FEDERATION_CHECKPOINT_H_
#define FEDBERRY_SERVER_FEDERATION_CHECKPOINT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint_store.h"
#include "server/round/round_types.h"

namespace fedberry::server {

// Internal when LibTorch cannot serialize the model.
absl::StatusOr<std::vector<checkpoint::CheckpointFile>>
EncodeFederationCheckpoint(const FederationSnapshot& snapshot,
                           const v1::TrainingPlan& plan);

struct DecodedFederation {
  std::string name;  // the checkpoint's, for messages
  FederationSnapshot snapshot;
  std::string model_name;  // runtime::ModelIdOf the plan
  // Absent from checkpoints written before plans were kept.
  std::optional<v1::TrainingPlan> plan;
};

// DataLoss when a file is missing or malformed.
absl::StatusOr<DecodedFederation> DecodeFederationCheckpoint(
    const checkpoint::LoadedCheckpoint& loaded);

// OK when the job of `plan` may continue from `decoded`: the same plan
// (model file, shapes, loss, optimizer and its settings, preprocessing),
// or, for a checkpoint that kept no plan, the same model.
// FailedPrecondition naming each field that differs otherwise.
absl::Status CheckSamePlan(const DecodedFederation& decoded,
                           const v1::TrainingPlan& plan);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FEDERATION_CHECKPOINT_H_
