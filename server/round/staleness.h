// Asynchronous rounds (FedBuff, Nguyen et al., AISTATS 2022): an update
// trained on an older version of the model counts for less. Its staleness s
// is the versions published since its board pulled; its weight is s's
// function, and it joins the buffer as the current model moved by that
// share of what the board's training changed.
#ifndef FEDBERRY_SERVER_ROUND_STALENESS_H_
#define FEDBERRY_SERVER_ROUND_STALENESS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/model.h"

namespace fedberry::server {

enum class StalenessWeighting {
  kPolynomial,  // 1 / sqrt(1 + s), FedBuff's default
  kConstant,    // 1: every update counts alike
};

// "polynomial" or "constant"; InvalidArgument naming the choices otherwise.
absl::StatusOr<StalenessWeighting> ParseStalenessWeighting(
    absl::string_view name);
const char* StalenessWeightingName(StalenessWeighting weighting);

// The weight of an update `staleness` (>= 0) versions old, in (0, 1].
double StalenessWeight(StalenessWeighting weighting, int staleness);

// `current` + `weight` x (`update` - `pulled`): a board's training, done on
// the version it pulled, applied to the current one. Floating tensors only;
// integer ones (batch norm's counters) are the update's own. The three
// must share a layout (checked before: CheckUpdateLayout).
runtime::NamedTensors Rebase(const runtime::NamedTensors& update,
                             const runtime::NamedTensors& pulled,
                             const runtime::NamedTensors& current,
                             double weight);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_STALENESS_H_
