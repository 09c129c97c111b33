#include "secagg/parameters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"

namespace fedberry::secagg {
namespace {

double LogChoose(int n, int k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

// P[X = x] for x = 0..draws, X the marked items among `draws` taken without
// replacement from `population` items of which `marked` are marked.
std::vector<double> HypergeometricPmf(int population, int marked, int draws) {
  std::vector<double> pmf(draws + 1, 0.0);
  const double log_total = LogChoose(population, draws);
  const int low = std::max(0, draws - (population - marked));
  const int high = std::min(draws, marked);
  for (int x = low; x <= high; ++x) {
    pmf[x] = std::exp(LogChoose(marked, x) +
                      LogChoose(population - marked, draws - x) - log_total);
  }
  return pmf;
}

// The margin of `probability` below 2^target_log2, in bits (infinite when
// the probability is 0).
double Margin(double probability, double target_log2) {
  if (probability <= 0) return std::numeric_limits<double>::infinity();
  return target_log2 - std::log2(probability);
}

}  // namespace

absl::StatusOr<SecAggParameters> ChooseParameters(
    int n, const ParameterOptions& options) {
  if (n < 2 || n > kMaxParameterCohort) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a SecAgg cohort of %d boards; 2..%d are planned", n,
                        kMaxParameterCohort));
  }
  for (double rate : {options.dropout_rate, options.corrupt_rate}) {
    if (!(rate >= 0 && rate < 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "SecAgg dropout and corrupt rates must be in [0, 1); got %g and %g",
          options.dropout_rate, options.corrupt_rate));
    }
  }
  if (!(options.correctness_log2 < 0) || !(options.security_log2 < 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SecAgg failure targets 2^%g and 2^%g; both exponents must be "
        "negative",
        options.correctness_log2, options.security_log2));
  }
  const int others = n - 1;
  // The small epsilon keeps 0.1 * 50 from becoming 6 through rounding.
  const int corrupt = std::min(
      others, static_cast<int>(std::ceil(options.corrupt_rate * n - 1e-9)));
  const int dropped =
      static_cast<int>(std::ceil(options.dropout_rate * n - 1e-9));
  // Worst case for a board: every corrupt and dropped board among the
  // others, and the two sets apart.
  const int honest_survivors = std::max(0, others - corrupt - dropped);
  const bool malicious = options.threat == ThreatModel::kMaliciousServer;

  for (int k = 1; k <= others; ++k) {
    const std::vector<double> good =
        HypergeometricPmf(others, honest_survivors, k);
    const std::vector<double> bad = HypergeometricPmf(others, corrupt, k);
    // below[t] = P[good < t]; at_least[c] = P[bad >= c], each summed from
    // its small end so tiny tails keep their digits.
    std::vector<double> below(k + 2, 0.0);
    for (int t = 1; t <= k + 1; ++t) below[t] = below[t - 1] + good[t - 1];
    std::vector<double> at_least(k + 2, 0.0);
    for (int c = k; c >= 0; --c) at_least[c] = at_least[c + 1] + bad[c];

    bool found = false;
    SecAggParameters best;
    double best_margin = -std::numeric_limits<double>::infinity();
    for (int t = 1; t <= k; ++t) {
      // Secure while corrupt neighbours < t (or < 2t - K).
      const int breach = malicious ? 2 * t - k : t;
      const double correctness = n * below[t];
      const double security =
          breach <= 0 ? n : (breach > k ? 0.0 : n * at_least[breach]);
      const double margin =
          std::min(Margin(correctness, options.correctness_log2),
                   Margin(security, options.security_log2));
      if (margin >= 0 && margin > best_margin) {
        found = true;
        best_margin = margin;
        best = {k, t, corrupt, dropped, correctness, security};
      }
    }
    if (found) return best;
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "no SecAgg+ neighbour count works for %d boards with %d corrupt and %d "
      "dropped (rates %g and %g): even the complete graph misses the "
      "failure targets 2^%g (correctness) and 2^%g (security)",
      n, corrupt, dropped, options.corrupt_rate, options.dropout_rate,
      options.correctness_log2, options.security_log2));
}

}  // namespace fedberry::secagg
