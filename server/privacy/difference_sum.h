// The sum at the heart of DP-FedAvg: each update's difference from the
// round's model over its floating tensors, times a scale (its clip), added
// up in float64; integer tensors take no part. The root's Gaussian sum
// noises it and divides it by the expected cohort; a site gateway's
// clipped sum forwards it as it is.
// Thread-safety: none (a round's adds come one at a time).
#ifndef FEDBERRY_SERVER_PRIVACY_DIFFERENCE_SUM_H_
#define FEDBERRY_SERVER_PRIVACY_DIFFERENCE_SUM_H_

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::server {

class DifferenceSum {
 public:
  explicit DifferenceSum(std::shared_ptr<const runtime::NamedTensors> global);

  // The L2 norm of `update` - the model (runtime::UpdateNorm's errors).
  absl::StatusOr<double> Norm(const runtime::NamedTensors& update) const;
  // Adds (`update` - the model) x `scale`; `update` has the model's layout.
  void Add(const runtime::NamedTensors& update, double scale);
  // Adds Gaussian noise of standard deviation `stddev` to every summed
  // value, drawn from `generator`.
  void AddNoise(double stddev, at::Generator& generator);
  // The model plus the sum / `divisor`, in the model's dtypes; integer
  // tensors the model's own.
  runtime::NamedTensors Over(double divisor) const;

 private:
  const std::shared_ptr<const runtime::NamedTensors> global_;
  std::vector<at::Tensor> sum_;  // float64; undefined for integer tensors
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PRIVACY_DIFFERENCE_SUM_H_
