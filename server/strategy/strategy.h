// How a round's accepted updates become the next global model: the job's
// aggregation strategy (--strategy). The round coordinator holds one Strategy
// for the job and asks it for a RoundAggregator per round; it knows no rule.
//
//   fedavg, fedprox      weighted mean, a running float64 sum: O(model)
//                        memory (fedprox differs on the board only: its
//                        proximal term, mu in the plan)
//   fedadam, fedyogi,    the weighted mean as a pseudo-gradient for a server
//   fedadagrad           optimizer (Reddi et al., ICLR 2021) whose moments
//                        are the strategy's state, checkpointed with the job
//   median, trimmed_mean coordinate-wise, unweighted (Yin et al., ICML 2018)
//   krum, multikrum      the update(s) closest to their n - f - 2 nearest
//                        others (Blanchard et al., NeurIPS 2017)
//
// The robust rules need every update of the round: those are kept in a
// disk-backed UpdateStore, so server memory stays O(model) plus a bounded
// read buffer however many boards report.
//
// Every strategy treats floating tensors by its rule and integer tensors
// (e.g. batch norm's num_batches_tracked) by the weighted mean, rounded.
// Server optimizers step only the model's parameters; its buffers (batch
// norm statistics) take the weighted mean, as a step of fixed size could
// drive a running variance below zero.
//
// Updates reach Add already checked against the round's layout
// (CheckUpdateLayout) and the update bound.
// Thread-safety: a Strategy and its aggregators are used by one thread at a
// time (the coordinator's add lock for Add, taken outside its main lock;
// its driver thread for the rest, once the round's adds are done).
#ifndef FEDBERRY_SERVER_STRATEGY_STRATEGY_H_
#define FEDBERRY_SERVER_STRATEGY_STRATEGY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::server {

struct StrategyOptions {
  std::string name = "fedavg";
  double proximal_mu = 0;  // fedprox: the boards' proximal term (> 0)
  // fedadam, fedyogi, fedadagrad: x += server_lr * m / (sqrt(v) + tau),
  // m and v from the pseudo-gradient (average - x) with beta1, beta2.
  double server_lr = 1.0;
  double beta1 = 0.5;
  double beta2 = 0.99;
  double tau = 1.0;
  // trimmed_mean: the share of values dropped at each end, in [0, 0.5).
  double trim_fraction = 0.1;
  int byzantine = 0;  // krum, multikrum: f, the faulty boards tolerated
  int krum_keep = 0;  // multikrum: m, the updates averaged (krum: 1)
  // Where the robust rules keep a round's updates (a file, unlinked at
  // once, so nothing is left behind by a crash).
  std::string spill_dir = ".";
  // The first `parameter_count` tensors of the model are its parameters
  // (runtime::Model::State lists parameters, then buffers); -1: all
  // floating tensors are.
  int parameter_count = -1;
};

// One round of aggregation.
class RoundAggregator {
 public:
  virtual ~RoundAggregator() = default;
  // Takes an update (checked against the round's layout) with its weight
  // (sample count, > 0). InvalidArgument for a weight that is not;
  // Internal when the update cannot be stored.
  virtual absl::Status Add(const runtime::NamedTensors& update,
                           double weight) = 0;
  // Takes a site gateway's forwarded sum (tiers under differential
  // privacy): `sum` is the round's model plus the sum of `updates` boards'
  // clipped differences from it, `clipped` of which reached the bound.
  // Only a rule that sums unweighted clipped updates can take one:
  // InvalidArgument from every other.
  virtual absl::Status AddSum(const runtime::NamedTensors& sum, int updates,
                              int clipped);
  virtual int updates() const = 0;
  // The round's cohort is expected to be this large (Poisson sampling's
  // q * n): a rule whose denominator must not depend on who reported
  // (differential privacy's) divides by it. Others ignore it.
  virtual void Expect(double updates) {}
  // The next global model, in the global model's dtypes. FailedPrecondition
  // when the round has fewer updates than the rule needs.
  virtual absl::StatusOr<runtime::NamedTensors> Result() = 0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual const std::string& name() const = 0;
  // Starts a round whose global model is `global`.
  virtual absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) = 0;
  // The server published `round`'s Result: adopt the state it computed
  // (server optimizer moments). A result the server refused (not finite)
  // is never committed, so the state stays where it was.
  virtual void Commit(RoundAggregator& round) {}
  // The state to checkpoint with the federation (empty when stateless),
  // and its restoration. Restore: InvalidArgument when `state` does not
  // fit the strategy and model.
  virtual runtime::NamedTensors State() const { return {}; }
  virtual absl::Status Restore(const runtime::NamedTensors& state);
  // The fewest updates a round's Result accepts.
  virtual int MinUpdates() const { return 1; }
};

std::vector<std::string> StrategyNames();

// InvalidArgument naming the setting for an unknown name or parameters the
// rule cannot use (e.g. krum with n <= 2f + 2 for the smallest round
// `min_updates`, a trim fraction outside [0, 0.5)), with what to change.
absl::Status ValidateStrategyOptions(const StrategyOptions& options,
                                     int min_updates);

// The strategy of `options` for a model of `model`'s layout. Same errors
// as ValidateStrategyOptions (with min_updates 1).
absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(
    const StrategyOptions& options, const runtime::NamedTensors& model);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_STRATEGY_H_
