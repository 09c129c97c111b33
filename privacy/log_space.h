// Arithmetic on numbers held as their natural logarithms, for the Rényi DP
// sums whose terms overflow a double long before the sums become useful
// (A_alpha at order 1024 multiplies exp(i^2 / 2 sigma^2) terms). Zero is
// -infinity. The same helpers as Google's dp_accounting
// (rdp_privacy_accountant.py: _log_add, _log_comb, _log_erfc).
// Thread-safety: pure functions, safe from any thread (lgamma_r, not the
// lgamma that writes the global signgam).
#ifndef FEDBERRY_PRIVACY_LOG_SPACE_H_
#define FEDBERRY_PRIVACY_LOG_SPACE_H_

namespace fedberry::privacy {

// log(exp(log_x) + exp(log_y)), exact when either is -infinity (a zero).
double LogAdd(double log_x, double log_y);

// log|C(n, k)| for real n and k through log-gamma, so fractional n (a
// fractional Rényi order) works too; the absolute value because C(n, k)
// alternates in sign for integer k > n + 1 when n is fractional.
double LogAbsBinomial(double n, double k);

// log(erfc(x)), accurate where erfc(x) itself underflows (x above ~26.5):
// there the asymptotic series of dp_accounting's fallback, which at such x
// is exact to the last bits that matter.
double LogErfc(double x);

}  // namespace fedberry::privacy

#endif  // FEDBERRY_PRIVACY_LOG_SPACE_H_
