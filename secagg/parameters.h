// How many neighbours each board shares with (K) and how many shares
// rebuild a secret (t) for a SecAgg+ session of n boards (Bell et al.,
// "Secure Single-Server Aggregation with (Poly)Logarithmic Overhead", CCS
// 2020): each board masks and shares only with K others instead of all
// n - 1, and K grows like log n.
//
// The model. A cohort of n boards holds at most ceil(gamma n) corrupt ones
// (colluding with the server) and loses at most ceil(delta n) during the
// session; both sets are fixed independently of the graph. The graph is
// K-regular with each board's neighbours a uniform K-subset of the other
// n - 1 (a Harary graph under a uniformly random numbering, as SecAgg+
// implementations draw it), so a board's corrupt or honest-surviving
// neighbours follow a hypergeometric law, computed exactly (log-gamma,
// summed term by term, so tails near 1e-16 keep their precision). A board's
// secrets are Shamir-shared among its K neighbours with threshold t.
//   Correctness: every board has at least t honest survivors among its
//     neighbours (the worst case: every corrupt board refuses to help and
//     the dropped and corrupt boards are distinct), so the server can always
//     rebuild what it needs. Failure: n * P[honest survivors < t], at most
//     2^correctness_log2 (default -20).
//   Security (an honest-but-curious server): no board has t corrupt
//     neighbours, who could rebuild its secrets alone. Failure: n * P[corrupt
//     >= t], at most 2^security_log2 (default -40). Against a server that
//     lies about who dropped, honest neighbours may answer both of its
//     requests for a board (its mask key and its self-mask seed) from
//     different halves, so security needs corrupt < 2t - K (kMaliciousServer).
// Union bounds over the n boards; the connectivity of the honest survivors'
// graph (a disconnected one would reveal partial sums) is not modelled here.
//
// K is the smallest neighbour count for which some t meets both bounds;
// among those t, the one with the widest margin (in log2) below both
// targets. The search runs up to the complete graph, K = n - 1, which tiny
// cohorts need. K grows with n, though not strictly: ceil(gamma n) steps
// up at some n, so K can fall by a little when n grows by one.
//
// Thread-safety: functions without shared state.
#ifndef FEDBERRY_SECAGG_PARAMETERS_H_
#define FEDBERRY_SECAGG_PARAMETERS_H_

#include "absl/status/statusor.h"

namespace fedberry::secagg {

enum class ThreatModel { kHonestButCuriousServer, kMaliciousServer };

struct ParameterOptions {
  double dropout_rate = 0.1;  // delta in [0, 1)
  double corrupt_rate = 0.1;  // gamma in [0, 1)
  double correctness_log2 = -20;
  double security_log2 = -40;
  ThreatModel threat = ThreatModel::kHonestButCuriousServer;
};

struct SecAggParameters {
  int neighbours = 0;  // K
  int threshold = 0;   // t, 1..K
  int corrupt = 0;     // ceil(gamma n), the corrupt boards assumed
  int dropped = 0;     // ceil(delta n), the dropouts assumed
  // The union bounds of the chosen K and t (0 when the counts make failure
  // impossible).
  double correctness_failure = 0;
  double security_failure = 0;
};

inline constexpr int kMaxParameterCohort = 10000;

// K and t for a cohort of n (2..kMaxParameterCohort) boards.
// InvalidArgument for n out of range, rates outside [0, 1) or targets not
// negative; FailedPrecondition when no K up to n - 1 meets both targets
// (too many corrupt or dropped boards for the cohort), naming the counts.
absl::StatusOr<SecAggParameters> ChooseParameters(
    int n, const ParameterOptions& options = {});

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_PARAMETERS_H_
