// The privacy accountant a federation server holds under differential
// privacy: the Rényi DP spent so far at a grid of orders, composed round by
// round (RDP adds across rounds, whatever each round's sampling rate and
// noise), converted to (epsilon, delta) on demand; its state (orders, RDP
// values, rounds counted) is what a checkpoint saves and Restore takes back.
// Also the planning inverse: the noise multiplier a job needs for a target
// epsilon. Each round is the Poisson-subsampled Gaussian mechanism of
// privacy/rdp.h with add/remove-one-board adjacency.
// Thread-safety: RdpAccountant is thread-compatible (const methods may run
// concurrently; anything else needs the caller's lock); the free functions
// are safe from any thread.
#ifndef FEDBERRY_PRIVACY_RDP_ACCOUNTANT_H_
#define FEDBERRY_PRIVACY_RDP_ACCOUNTANT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "privacy/rdp.h"

namespace fedberry::privacy {

class RdpAccountant {
 public:
  // Orders must be above 1 (not checked here: Compose, SpentAfter and
  // Spent refuse a bad grid with InvalidArgument).
  explicit RdpAccountant(std::vector<double> orders = DefaultOrders());

  // Composes `steps` rounds at sampling rate q and noise multiplier z: adds
  // steps x the RDP of one round to every order. InvalidArgument (state
  // unchanged) for q outside [0, 1], z negative or not finite, NaN, steps <
  // 0, a step count that would overflow, or an order not above 1.
  absl::Status Compose(double q, double noise_multiplier, int64_t steps = 1);

  // The epsilon spent so far at `delta`, and its order; epsilon is 0 before
  // any private round and +infinity after a round with z == 0 (q > 0).
  // InvalidArgument for delta outside (0, 1) or a bad order grid.
  absl::StatusOr<PrivacySpent> Spent(double delta) const;

  // What Spent(delta) would say after Compose(q, z) (one more round),
  // without composing it: a job with a target epsilon asks before each
  // round and stops when the answer exceeds the target. Errors as Compose
  // and Spent.
  absl::StatusOr<PrivacySpent> SpentAfter(double q, double noise_multiplier,
                                          double delta) const;

  // Rounds composed so far (including rounds at q == 0, which spend none).
  int64_t steps() const { return steps_; }
  const std::vector<double>& orders() const { return orders_; }
  // RDP spent at each of orders(); +infinity is a valid value.
  const std::vector<double>& rdp() const { return rdp_; }

  // Replaces the state with a saved one (from a checkpoint). InvalidArgument,
  // naming what is wrong and leaving the state unchanged, when `rdp` has a
  // size other than orders()'s, an entry is NaN or negative, steps < 0, or
  // an entry is above 0 with steps == 0.
  absl::Status Restore(const std::vector<double>& rdp, int64_t steps);
  // As above, also checking that the saved `orders` are this accountant's,
  // value for value (a checkpoint written by a build with another grid must
  // not have its RDP values read at the wrong orders). Save the orders as
  // exact doubles (e.g. %.17g) for this to hold.
  absl::Status Restore(const std::vector<double>& orders,
                       const std::vector<double>& rdp, int64_t steps);

 private:
  std::vector<double> orders_;
  std::vector<double> rdp_;
  int64_t steps_ = 0;
};

// The smallest noise multiplier for which `steps` rounds at sampling rate q
// stay within target_epsilon at delta, accounted at `orders`: doubling or
// halving from 1 to bracket it, then bisection, as dp_accounting's
// calibrate_dp_mechanism (which TF Privacy's compute_noise calls) does. The
// answer is the upper end of a bracket 1e-4 wide relative to it: within the
// target there, beyond it 1e-4 lower. 0 when q == 0 or steps == 0 (no round
// can leak). InvalidArgument for q outside [0, 1], steps < 0, delta outside
// (0, 1), target_epsilon not a finite number > 0, or an order not above 1;
// NotFound when even a multiplier of 2^30 exceeds the target.
absl::StatusOr<double> NoiseMultiplierFor(
    double q, int64_t steps, double delta, double target_epsilon,
    const std::vector<double>& orders = DefaultOrders());

}  // namespace fedberry::privacy

#endif  // FEDBERRY_PRIVACY_RDP_ACCOUNTANT_H_
