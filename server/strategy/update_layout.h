// Whether an update has the round's model layout: the same tensors, in the
// same order, with the same names, shapes and dtypes, every value finite.
// Every strategy aggregates only updates that pass.
// Thread-safety: pure function.
#ifndef FEDBERRY_SERVER_STRATEGY_UPDATE_LAYOUT_H_
#define FEDBERRY_SERVER_STRATEGY_UPDATE_LAYOUT_H_

#include "absl/status/status.h"
#include "runtime/model.h"

namespace fedberry::server {

// InvalidArgument naming the first tensor that differs from `reference`
// (count, name, shape, dtype) or holds NaN/Inf.
absl::Status CheckUpdateLayout(const runtime::NamedTensors& reference,
                               const runtime::NamedTensors& update);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_UPDATE_LAYOUT_H_
