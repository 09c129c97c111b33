#include "server/round/staleness.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"

namespace fedberry::server {

absl::StatusOr<StalenessWeighting> ParseStalenessWeighting(
    absl::string_view name) {
  if (name == "polynomial") return StalenessWeighting::kPolynomial;
  if (name == "constant") return StalenessWeighting::kConstant;
  return absl::InvalidArgumentError(
      absl::StrCat("--staleness_weight must be polynomial (1/sqrt(1+s)) or "
                   "constant, not '",
                   base::Printable(name), "'"));
}

const char* StalenessWeightingName(StalenessWeighting weighting) {
  return weighting == StalenessWeighting::kConstant ? "constant" : "polynomial";
}

double StalenessWeight(StalenessWeighting weighting, int staleness) {
  if (weighting == StalenessWeighting::kConstant || staleness <= 0) return 1;
  return 1.0 / std::sqrt(1.0 + staleness);
}

runtime::NamedTensors Rebase(const runtime::NamedTensors& update,
                             const runtime::NamedTensors& pulled,
                             const runtime::NamedTensors& current,
                             double weight) {
  runtime::NamedTensors rebased;
  rebased.reserve(update.size());
  for (size_t i = 0; i < update.size(); ++i) {
    const at::Tensor& u = update[i].tensor;
    if (!at::isFloatingType(u.scalar_type())) {
      rebased.push_back({update[i].name, u});
      continue;
    }
    // In float64, so a small weighted step is not lost to rounding.
    const at::Tensor step =
        (u.to(at::kDouble) - pulled[i].tensor.to(at::kDouble)) * weight;
    rebased.push_back(
        {update[i].name,
         (current[i].tensor.to(at::kDouble) + step).to(u.scalar_type())});
  }
  return rebased;
}

}  // namespace fedberry::server
