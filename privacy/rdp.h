// Rényi differential privacy (RDP) of the Poisson-subsampled Gaussian
// mechanism, and its conversion to (epsilon, delta): the mathematics of the
// privacy accountant, as Google's dp_accounting computes it
// (python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant.py in
// google/differential-privacy). The mechanism: each record (for fedberry, a
// board with all its data) joins a step with probability q; the step adds
// Gaussian noise of standard deviation noise_multiplier x sensitivity to a
// sum; neighbouring data sets differ by adding or removing one record.
// RDP after Mironov, Talwar, Zhang 2019, "Rényi Differential Privacy of the
// Sampled Gaussian Mechanism" (arXiv:1908.10530), in log space.
// Thread-safety: pure functions, safe from any thread.
#ifndef FEDBERRY_PRIVACY_RDP_H_
#define FEDBERRY_PRIVACY_RDP_H_

#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::privacy {

// An (epsilon, delta) guarantee's epsilon and the Rényi order it came from.
struct PrivacySpent {
  double epsilon = 0;
  double order = 0;
};

// dp_accounting's DEFAULT_RDP_ORDERS: 1.1 to 10.9 by 0.1, 11 to 63, then
// 128, 256, 512 and 1024 (156 orders).
std::vector<double> DefaultOrders();

// log(A_alpha) of Mironov et al. for 0 < q < 1, noise_multiplier > 0 and a
// finite order alpha > 1: the exact binomial sum for an integer alpha (cost
// O(alpha)), the two-sided series of Sec. 3.3 for a fractional one. The
// series sums the terms' magnitudes, an upper bound (as dp_accounting has
// since 2024); it is +infinity when 1000 terms do not converge, which
// leaves that order out of any epsilon rather than under-reporting it.
double SubsampledGaussianLogA(double q, double noise_multiplier, double alpha);

// RDP at each of `orders` of one step of the Poisson-subsampled Gaussian
// mechanism: 0 when q == 0; +infinity at an infinite order or when
// noise_multiplier == 0 (and q > 0); alpha / (2 z^2) when q == 1; otherwise
// log(A_alpha) / (alpha - 1). Requires q in [0, 1], a finite
// noise_multiplier >= 0 and orders above 1 (an order of at most 1 is allowed
// only with q == 0 or 1); an entry that breaks these is NaN, which
// EpsilonFromRdp refuses, so a mistake cannot pass for a budget.
std::vector<double> SubsampledGaussianRdp(double q, double noise_multiplier,
                                          const std::vector<double>& orders);

// The smallest epsilon over `orders` such that the RDP curve `rdp` implies
// (epsilon, delta)-DP, with the order it came from: dp_accounting's
// compute_epsilon, the improved conversion (Canonne, Kamath, Steinke 2020,
// arXiv:2004.00010 Prop. 12; Asoodeh et al., arXiv:2001.05990 Eq. 20)
//   epsilon = rdp + log1p(-1/alpha) - log(delta * alpha) / (alpha - 1),
// 0 at an order whose rdp is below the KL bound (delta^2 > 1 - exp(-rdp)),
// +infinity at orders up to 1.01 where the formula is unstable and at
// infinite rdp; the first order wins a tie; epsilon is clamped at 0. All
// orders infinite: epsilon +infinity at the first order.
// InvalidArgument (naming the entry) for delta outside (0, 1) (at delta 0
// RDP gives no finite epsilon), empty or mismatched sizes, an order below 1
// or NaN, and an rdp entry that is NaN or negative: dp_accounting answers a
// negative entry with a warning and epsilon 0, which would under-report a
// budget.
absl::StatusOr<PrivacySpent> EpsilonFromRdp(const std::vector<double>& orders,
                                            const std::vector<double>& rdp,
                                            double delta);

}  // namespace fedberry::privacy

#endif  // FEDBERRY_PRIVACY_RDP_H_
