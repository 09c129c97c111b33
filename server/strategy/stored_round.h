// What the rules that keep a round's updates share: the disk-backed store of
// the floating tensors, each update's weight, and the weighted mean of the
// integer tensors (which no coordinate-wise rule applies to).
// Thread-safety: see strategy.h.
#ifndef FEDBERRY_SERVER_STRATEGY_STORED_ROUND_H_
#define FEDBERRY_SERVER_STRATEGY_STORED_ROUND_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/strategy/fedavg.h"
#include "server/strategy/strategy.h"
#include "server/strategy/update_store.h"

namespace fedberry::server {

class StoredRound : public RoundAggregator {
 public:
  absl::Status Add(const runtime::NamedTensors& update, double weight) override;
  int updates() const override { return static_cast<int>(weights_.size()); }

 protected:
  StoredRound(std::shared_ptr<const runtime::NamedTensors> global,
              std::unique_ptr<UpdateStore> store);

  // The next model from a flat row of the floating coordinates (the rule's
  // result) and the integer tensors' weighted mean.
  absl::StatusOr<runtime::NamedTensors> Assemble(
      const std::vector<float>& floating) const;

  std::shared_ptr<const runtime::NamedTensors> global_;
  std::unique_ptr<UpdateStore> store_;
  std::vector<double> weights_;

 private:
  runtime::NamedTensors integers_;  // the layout's integer tensors
  std::unique_ptr<FedAvg> integer_mean_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_STORED_ROUND_H_
