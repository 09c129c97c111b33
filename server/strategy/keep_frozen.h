// A strategy for a job that trains part of its model (--trainable): the
// job's own rule aggregates whole updates (the coordinator completes each
// board's partial update with the global model's frozen tensors,
// runtime::TrainableSet::Complete), and every round's result takes the
// frozen tensors back from the round's global model bit for bit, whatever
// the rule computed for them (a float64 mean of equal float32 values, a
// server optimizer's step of zero).
// Thread-safety: as the wrapped strategy's.
#ifndef FEDBERRY_SERVER_STRATEGY_KEEP_FROZEN_H_
#define FEDBERRY_SERVER_STRATEGY_KEEP_FROZEN_H_

#include <memory>

#include "runtime/trainable_set.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// `strategy` with frozen tensors kept; `strategy` itself when `trainable`
// freezes nothing.
std::unique_ptr<Strategy> KeepFrozen(std::unique_ptr<Strategy> strategy,
                                     runtime::TrainableSet trainable);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_KEEP_FROZEN_H_
