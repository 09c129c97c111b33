// Adaptive server optimizers (Reddi et al., "Adaptive Federated
// Optimization", ICLR 2021, Algorithm 2): the round's weighted mean minus the
// global model is a pseudo-gradient d, and the server steps
//   m = beta1 m + (1 - beta1) d
//   v = beta2 v + (1 - beta2) d^2                    fedadam
//   v = v - (1 - beta2) d^2 sign(v - d^2)            fedyogi
//   v = v + d^2                                      fedadagrad
//   x = x + server_lr m^ / (sqrt(v^) + tau)
// with m = v = 0 at the start and Adam's bias correction at step t,
// m^ = m / (1 - beta1^t) and v^ = v / (1 - beta2^t) (fedadagrad: v^ = v),
// so the first rounds of a short job are not spent warming the moments up
// (the paper starts v at tau^2 without correction; TFF's server optimizers
// correct). m, v (float32, two copies of the parameters) and t are the
// strategy's state: checkpointed with the federation and restored on
// resume, so a restarted server continues exactly. Buffers and integer
// tensors take the weighted mean.
// Thread-safety: see strategy.h.
#ifndef FEDBERRY_SERVER_STRATEGY_SERVER_OPTIMIZER_H_
#define FEDBERRY_SERVER_STRATEGY_SERVER_OPTIMIZER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// For options.name fedadam, fedyogi or fedadagrad (validated by the caller).
absl::StatusOr<std::unique_ptr<Strategy>> MakeServerOptimizer(
    const StrategyOptions& options, const runtime::NamedTensors& model);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_SERVER_OPTIMIZER_H_
