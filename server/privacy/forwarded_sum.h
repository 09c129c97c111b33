// A site gateway's forwarded sum at a root under differential privacy
// (tiers): the gateway adds up its boards' clipped updates and sends the
// sum with how many it holds (TrainMetrics.forwarded_sum), no noise; the
// root checks what it claims and adds it to the round's sum, where the
// noise goes once. Everything here comes from the wire and is checked.
// Thread-safety: pure functions (AddToRound: as the round's Add).
#ifndef FEDBERRY_SERVER_PRIVACY_FORWARDED_SUM_H_
#define FEDBERRY_SERVER_PRIVACY_FORWARDED_SUM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

class DifferenceSum;

// A forwarded sum may exceed updates x clip by this share before it is
// refused: float32 rounding of the model plus the sum, and lossy encodings
// (fp16, int8) move its norm a little. What gets in is clipped to the bound.
inline constexpr double kForwardedSumSlack = 0.01;

// InvalidArgument when `sum` cannot come from `boards` boards (0: the
// sender is a board, not a site gateway): a board sends no sum, a gateway
// no more updates than boards it declared, and no more clipped than summed.
absl::Status CheckForwardedSum(const v1::ForwardedSum& sum, uint32_t boards);

// The factor that brings a forwarded sum of norm `norm` within `updates` x
// `clip` (1 when within it; `clip` 0: no bound, local DP's noisy updates).
// InvalidArgument naming the figures when the norm exceeds the bound by
// more than kForwardedSumSlack.
absl::StatusOr<double> ForwardedSumScale(double norm, int updates, double clip);

// Adds `sum` (the round's model plus `updates` boards' clipped differences
// from it: a site gateway's forwarded sum, a session's unmasked sum) to
// `into`, brought within updates x `clip` (ForwardedSumScale's refusal
// beyond its slack; `clip` 0: no bound).
absl::Status AddBoundedSum(DifferenceSum& into,
                           const runtime::NamedTensors& sum, int updates,
                           double clip);

// Adds the update of `header` to `round`: a forwarded sum (checked against
// `boards`, what the sender declared at join) through AddSum, anything else
// through Add with its sample count.
absl::Status AddToRound(RoundAggregator& round, const v1::UpdateHeader& header,
                        uint32_t boards, const runtime::NamedTensors& update);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PRIVACY_FORWARDED_SUM_H_
