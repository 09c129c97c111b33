#include "privacy/rdp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "privacy/log_space.h"

namespace fedberry::privacy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// dp_accounting's _MAX_STEPS_LOG_A_FRAC.
constexpr int kMaxFractionalTerms = 1000;

// sum_{i=0}^{alpha} C(alpha, i) q^i (1-q)^(alpha-i) exp((i^2 - i) / 2s^2).
double LogAInteger(double q, double sigma, int64_t alpha) {
  double log_a = -kInf;
  const double log_q = std::log(q);
  const double log1mq = std::log1p(-q);
  for (int64_t k = 0; k <= alpha; ++k) {
    const double i = static_cast<double>(k);
    const double a = static_cast<double>(alpha);
    const double log_coef = LogAbsBinomial(a, i) + i * log_q + (a - i) * log1mq;
    log_a = LogAdd(log_a, log_coef + (i * i - i) / (2 * (sigma * sigma)));
  }
  return log_a;
}

// The integrals of A_alpha over (-inf, z0] and [z0, inf) as two series
// (Mironov et al. Sec. 3.3), summed until both sides' terms fall and are
// e^-30 below the total.
double LogAFractional(double q, double sigma, double alpha) {
  double log_a0 = -kInf;
  double log_a1 = -kInf;
  const double z0 = sigma * sigma * std::log(1 / q - 1) + 0.5;
  const double log_q = std::log(q);
  const double log1mq = std::log1p(-q);
  const double erfc_scale = std::sqrt(2.0) * sigma;
  double last_s0 = -kInf;
  double last_s1 = -kInf;
  for (int k = 0; k < kMaxFractionalTerms; ++k) {
    const double i = k;
    const double j = alpha - i;
    const double log_coef = LogAbsBinomial(alpha, i);
    const double log_t0 = log_coef + i * log_q + j * log1mq;
    const double log_t1 = log_coef + j * log_q + i * log1mq;
    const double log_e0 = std::log(0.5) + LogErfc((i - z0) / erfc_scale);
    const double log_e1 = std::log(0.5) + LogErfc((z0 - j) / erfc_scale);
    const double log_s0 = log_t0 + (i * i - i) / (2 * (sigma * sigma)) + log_e0;
    const double log_s1 = log_t1 + (j * j - j) / (2 * (sigma * sigma)) + log_e1;
    log_a0 = LogAdd(log_a0, log_s0);
    log_a1 = LogAdd(log_a1, log_s1);
    const double total = LogAdd(log_a0, log_a1);
    if (log_s0 < last_s0 && log_s1 < last_s1 &&
        std::max(log_s0, log_s1) < total - 30) {
      return total;
    }
    last_s0 = log_s0;
    last_s1 = log_s1;
  }
  return kInf;
}

double RdpAtOrder(double q, double noise_multiplier, double alpha) {
  if (!(q >= 0 && q <= 1) || !(noise_multiplier >= 0) ||
      !std::isfinite(noise_multiplier) || std::isnan(alpha)) {
    return kNaN;
  }
  if (q == 0) return 0;
  if (std::isinf(alpha) || noise_multiplier == 0) return kInf;
  if (q == 1) return alpha / (2 * (noise_multiplier * noise_multiplier));
  if (alpha <= 1) return kNaN;  // log(A_alpha) / (alpha - 1) needs alpha > 1
  return SubsampledGaussianLogA(q, noise_multiplier, alpha) / (alpha - 1);
}

}  // namespace

std::vector<double> DefaultOrders() {
  std::vector<double> orders;
  // 1 + x / 10.0 as dp_accounting writes it, so the orders are its doubles.
  for (int x = 1; x < 100; ++x) orders.push_back(1 + x / 10.0);
  for (int order = 11; order < 64; ++order) orders.push_back(order);
  for (double order : {128.0, 256.0, 512.0, 1024.0}) orders.push_back(order);
  return orders;
}

double SubsampledGaussianLogA(double q, double noise_multiplier, double alpha) {
  if (alpha == std::floor(alpha)) {
    return LogAInteger(q, noise_multiplier, static_cast<int64_t>(alpha));
  }
  return LogAFractional(q, noise_multiplier, alpha);
}

std::vector<double> SubsampledGaussianRdp(double q, double noise_multiplier,
                                          const std::vector<double>& orders) {
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double alpha : orders) {
    rdp.push_back(RdpAtOrder(q, noise_multiplier, alpha));
  }
  return rdp;
}

absl::StatusOr<PrivacySpent> EpsilonFromRdp(const std::vector<double>& orders,
                                            const std::vector<double>& rdp,
                                            double delta) {
  if (!(delta > 0 && delta < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("delta must be in (0, 1), got ", delta));
  }
  if (orders.empty() || orders.size() != rdp.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("need one RDP value per order, got ", orders.size(),
                     " orders and ", rdp.size(), " RDP values"));
  }
  PrivacySpent best{kInf, orders[0]};
  for (size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    const double r = rdp[i];
    if (!(a >= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Rényi order ", a, " (index ", i, ") must be at least 1"));
    }
    if (!(r >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("RDP at order ", a, " (index ", i, ") is ", r,
                       "; it must be a number >= 0"));
    }
    double epsilon;
    if (delta * delta + std::expm1(-r) > 0) {
      epsilon = 0;  // the KL bound delta <= sqrt(1 - exp(-rdp)) suffices
    } else if (a > 1.01) {
      epsilon = r + std::log1p(-1 / a) - std::log(delta * a) / (a - 1);
    } else {
      epsilon = kInf;  // the conversion is unstable as alpha -> 1
    }
    if (epsilon < best.epsilon) best = {epsilon, a};
  }
  best.epsilon = std::max(0.0, best.epsilon);
  return best;
}

}  // namespace fedberry::privacy
