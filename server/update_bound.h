// How far one update may move the global model. An update whose values are
// finite but absurd (every weight 1e38) passes a NaN/Inf check and would
// destroy the average, so the server bounds each update's L2 distance from
// the round's global model by a multiple of the global model's own L2 norm
// (at least 1, so a model initialised at zero can still move). Distances are
// computed in float64, where 1e38 squared is still finite.
// Thread-safety: const after construction; safe to share.
#ifndef FEDBERRY_SERVER_UPDATE_BOUND_H_
#define FEDBERRY_SERVER_UPDATE_BOUND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::server {

class UpdateBound {
 public:
  // `global` is the round's model; `max_ratio` <= 0 turns the bound off.
  UpdateBound(std::shared_ptr<const runtime::NamedTensors> global,
              double max_ratio);

  // The update's distance from the global model as a multiple of the
  // bound's scale (the global norm, at least 1). InvalidArgument when it
  // exceeds max_ratio; expects an update of the global model's layout.
  absl::StatusOr<double> Check(const runtime::NamedTensors& update) const;

  double scale() const { return scale_; }

 private:
  std::shared_ptr<const runtime::NamedTensors> global_;
  double max_ratio_;
  double scale_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_UPDATE_BOUND_H_
