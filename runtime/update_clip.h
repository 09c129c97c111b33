// Bounding a model update in L2 norm, and noising it,, as differential privacy
// needs (DP-FedAvg, McMahan et al. 2018): the update is a model's difference
// from the round's global model over every floating tensor, taken as one
// vector; one longer than the bound is scaled down to it, keeping its
// direction. Boards clip before encoding, and the server clips every decoded
// update again, so the bound holds whatever a board or an encoding did.
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_UPDATE_CLIP_H_
#define FEDBERRY_RUNTIME_UPDATE_CLIP_H_

#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::runtime {

// The L2 norm of `model` - `reference` over their floating tensors, summed
// in float64. InvalidArgument naming the tensor when the two differ in
// names, shapes or dtypes.
absl::StatusOr<double> UpdateNorm(const NamedTensors& model,
                                  const NamedTensors& reference);

// Moves `model` to `reference` + (`model` - `reference`) * min(1, clip /
// norm) and returns the norm before. Integer tensors are left as they are.
// InvalidArgument for a bound that is not positive and finite, or the
// errors of UpdateNorm.
absl::StatusOr<double> ClipUpdate(NamedTensors& model,
                                  const NamedTensors& reference, double clip);

// Adds Gaussian noise of standard deviation `stddev` to every floating value
// of `model` (so its difference from any reference gets the same noise),
// drawn from a generator seeded with `seed`: the same seed, the same noise.
// InvalidArgument for a deviation that is negative or not finite.
absl::Status AddUpdateNoise(NamedTensors& model, double stddev, uint64_t seed);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_UPDATE_CLIP_H_
