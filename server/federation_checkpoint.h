// The server's federation state as a checkpoint: the global model
// (model.pt, a LibTorch archive of named tensors) and a state record
// (state.json: next round, model name, client registry, every round's
// report). Written after each round; a restarted server continues from it.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_FEDERATION_CHECKPOINT_H_
#define FEDBERRY_SERVER_FEDERATION_CHECKPOINT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint_store.h"
#include "server/round_coordinator.h"

namespace fedberry::server {

// Internal when LibTorch cannot serialize the model.
absl::StatusOr<std::vector<checkpoint::CheckpointFile>>
EncodeFederationCheckpoint(const FederationSnapshot& snapshot,
                           const std::string& model_name);

struct DecodedFederation {
  FederationSnapshot snapshot;
  std::string model_name;
};

// DataLoss when a file is missing or malformed.
absl::StatusOr<DecodedFederation> DecodeFederationCheckpoint(
    const checkpoint::LoadedCheckpoint& loaded);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FEDERATION_CHECKPOINT_H_
