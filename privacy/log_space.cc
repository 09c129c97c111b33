#include "privacy/log_space.h"

#include <math.h>  // lgamma_r

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace fedberry::privacy {
namespace {

constexpr double kPi = 3.14159265358979323846;

}  // namespace

double LogAdd(double log_x, double log_y) {
  const double a = std::min(log_x, log_y);
  const double b = std::max(log_x, log_y);
  if (a == -std::numeric_limits<double>::infinity()) return b;
  // inf - inf would be NaN; the sum of an infinity is that infinity.
  if (b == std::numeric_limits<double>::infinity()) return b;
  // exp(a) + exp(b) = (exp(a - b) + 1) * exp(b).
  return std::log1p(std::exp(a - b)) + b;
}

double LogAbsBinomial(double n, double k) {
  int sign;  // lgamma_r's sign of Gamma: unused, the result is log|C(n, k)|.
  return lgamma_r(n + 1, &sign) - lgamma_r(k + 1, &sign) -
         lgamma_r(n - k + 1, &sign);
}

double LogErfc(double x) {
  const double r = std::erfc(x);
  // Above DBL_MIN glibc's erfc keeps its relative accuracy; below it the
  // result is subnormal (losing bits) or zero.
  if (r >= DBL_MIN) return std::log(r);
  // erfc(x) ~ exp(-x^2 - .5/x^2 + .625/x^4 - ...) / (x sqrt(pi)): the
  // Laurent series at infinity dp_accounting's _log_erfc falls back on.
  const double inv2 = 1.0 / (x * x);
  return -std::log(kPi) / 2 - std::log(x) - x * x - 0.5 * inv2 +
         0.625 * inv2 * inv2 - 37.0 / 24.0 * inv2 * inv2 * inv2 +
         353.0 / 64.0 * inv2 * inv2 * inv2 * inv2;
}

}  // namespace fedberry::privacy
