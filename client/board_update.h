// A board's trained model as it travels to the server: under differential
// privacy clipped to the round's bound and, for local DP, noised; then, as
// the plan asks, sent whole (RAW) or encoded against the global model, top-k
// with the error feedback of what earlier rounds left unsent. PlanTrainer
// uses both steps; tiers::GatewayTrainer and the update attack of
// client/testing encode through EncodeUpdate too.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_BOARD_UPDATE_H_
#define FEDBERRY_CLIENT_BOARD_UPDATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/local_trainer.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "runtime/update_encoding.h"

namespace fedberry::client {

// Differential privacy on the board: `out`'s model (trained from `global`)
// clipped to the round's bound (config.dp_clip; none when it is 0) and
// under local DP noised (seeded by `noise_seed`), before any encoding; sets
// out.metrics' update_clipped. The clip's and the noise's errors.
absl::Status PrivatizeUpdate(const v1::TrainConfig& config,
                             const runtime::NamedTensors& global,
                             uint64_t noise_seed, TrainOutcome& out);

// The update of `model` (trained from `global`; both the tensors that
// travel, runtime::TrainableSet::Select) as `plan` asks it sent:
// empty for RAW; otherwise each floating tensor as its difference from
// `global`, and for TOPK with the leftovers `residual_in` (the floating
// tensors' shapes; may be empty) added first and what stays unsent put in
// `residual_next`. InvalidArgument when `model` and `global` differ in
// tensor count; the encoder's errors.
absl::StatusOr<std::vector<runtime::EncodedTensor>> EncodeUpdate(
    const v1::TrainingPlan& plan, const runtime::NamedTensors& model,
    const runtime::NamedTensors& global,
    const runtime::NamedTensors& residual_in,
    runtime::NamedTensors* residual_next);

// Whether `tensors` are, by name and shape, the floating tensors of `model`
// (top-k leftovers that fit it).
bool FitsFloatingTensors(const runtime::NamedTensors& tensors,
                         const runtime::NamedTensors& model);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_BOARD_UPDATE_H_
