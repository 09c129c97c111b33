// Federated averaging as a running weighted sum: each accepted update is
// folded into one float64 accumulator and dropped, so aggregation needs
// O(model) memory however many clients report. Updates whose names, shapes or
// dtypes differ from the round's global model, or that hold NaN/Inf, are
// refused and leave the sum untouched. The fedavg and fedprox strategies are
// this sum; the server optimizers and the robust rules use it too (for the
// average they step from, or for integer buffers).
// Thread-safety: not thread-safe; one round's owner serialises calls.
#ifndef FEDBERRY_SERVER_STRATEGY_FEDAVG_H_
#define FEDBERRY_SERVER_STRATEGY_FEDAVG_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::server {

class FedAvg {
 public:
  // `reference` is the round's global model; updates must match its layout.
  explicit FedAvg(const runtime::NamedTensors& reference);

  // OK when `update` matches the reference layout and is finite;
  // InvalidArgument naming the first offending tensor otherwise.
  absl::Status Validate(const runtime::NamedTensors& update) const;

  // Validates, then adds `update` with weight `weight` (its sample count).
  // InvalidArgument for a bad update or a weight that is not > 0.
  absl::Status Add(const runtime::NamedTensors& update, double weight);

  // Add for an update that Validate() accepted (callers that check more in
  // between need not pay for a second pass). InvalidArgument for a weight
  // that is not > 0.
  absl::Status AddValidated(const runtime::NamedTensors& update, double weight);

  int updates() const { return updates_; }
  double total_weight() const { return total_weight_; }

  // The weighted mean in the reference's dtypes (integers rounded).
  // FailedPrecondition when no update was added.
  absl::StatusOr<runtime::NamedTensors> Result() const;

 private:
  runtime::NamedTensors reference_;  // the layout updates must have
  runtime::NamedTensors sum_;        // float64 accumulators, reference names
  std::vector<at::ScalarType> dtypes_;
  int updates_ = 0;
  double total_weight_ = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_FEDAVG_H_
