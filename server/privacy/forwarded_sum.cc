#include "server/privacy/forwarded_sum.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/privacy/difference_sum.h"

namespace fedberry::server {

absl::Status CheckForwardedSum(const v1::ForwardedSum& sum, uint32_t boards) {
  if (boards == 0) {
    return absl::InvalidArgumentError(
        "a board sent a forwarded sum; only a site gateway (one that "
        "declared its boards when it joined) may");
  }
  if (sum.updates() > boards) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a site gateway's forwarded sum claims ", sum.updates(),
        " board updates; it declared ", boards, " boards when it joined"));
  }
  if (sum.clipped() > sum.updates()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a site gateway's forwarded sum claims ", sum.clipped(),
                     " clipped updates of ", sum.updates()));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> ForwardedSumScale(double norm, int updates,
                                         double clip) {
  if (!std::isfinite(norm)) {
    return absl::InvalidArgumentError("a forwarded sum's norm is not finite");
  }
  if (clip <= 0) return 1.0;
  const double bound = updates * clip;
  if (norm > bound * (1 + kForwardedSumSlack)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a site gateway's forwarded sum of ", updates,
        " clipped update(s) has norm ", norm, ", beyond ", updates,
        " x the clip bound ", clip, " = ", bound,
        ": a gateway must clip each board's update to the round's dp_clip"));
  }
  return norm > bound ? bound / norm : 1.0;
}

absl::Status AddBoundedSum(DifferenceSum& into,
                           const runtime::NamedTensors& sum, int updates,
                           double clip) {
  FEDBERRY_ASSIGN_OR_RETURN(const double norm, into.Norm(sum));
  FEDBERRY_ASSIGN_OR_RETURN(const double scale,
                            ForwardedSumScale(norm, updates, clip));
  into.Add(sum, scale);
  return absl::OkStatus();
}

absl::Status AddToRound(RoundAggregator& round, const v1::UpdateHeader& header,
                        uint32_t boards, const runtime::NamedTensors& update) {
  if (!header.metrics().has_forwarded_sum()) {
    return round.Add(update, static_cast<double>(header.num_samples()));
  }
  const v1::ForwardedSum& sum = header.metrics().forwarded_sum();
  FEDBERRY_RETURN_IF_ERROR(CheckForwardedSum(sum, boards));
  return round.AddSum(update, static_cast<int>(sum.updates()),
                      static_cast<int>(sum.clipped()));
}

}  // namespace fedberry::server
