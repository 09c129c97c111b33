#include "server/strategy/strategy.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/strategy/fedavg.h"
#include "server/strategy/krum.h"
#include "server/strategy/robust_mean.h"
#include "server/strategy/server_optimizer.h"

namespace fedberry::server {
namespace {

// fedavg and fedprox: the running weighted mean.
class MeanRound : public RoundAggregator {
 public:
  explicit MeanRound(const runtime::NamedTensors& global) : sum_(global) {}
  absl::Status Add(const runtime::NamedTensors& update,
                   double weight) override {
    return sum_.AddValidated(update, weight);
  }
  int updates() const override { return sum_.updates(); }
  absl::StatusOr<runtime::NamedTensors> Result() override {
    return sum_.Result();
  }

 private:
  FedAvg sum_;
};

class MeanStrategy : public Strategy {
 public:
  explicit MeanStrategy(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    return std::make_unique<MeanRound>(*global);
  }

 private:
  std::string name_;
};

bool IsOneOf(const std::string& name, std::initializer_list<const char*> set) {
  for (const char* s : set) {
    if (name == s) return true;
  }
  return false;
}

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

}  // namespace

absl::Status RoundAggregator::AddSum(const runtime::NamedTensors&, int updates,
                                     int) {
  return absl::InvalidArgumentError(absl::StrCat(
      "a forwarded sum of ", updates,
      " board update(s) reached a job that does not run under differential "
      "privacy; only such a job's root takes one"));
}

absl::Status Strategy::Restore(const runtime::NamedTensors& state) {
  if (state.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("strategy ", name(), " keeps no state, but ", state.size(),
                   " tensors were given (a checkpoint of another strategy?)"));
}

std::vector<std::string> StrategyNames() {
  return {"fedavg", "fedprox",      "fedadam", "fedyogi",  "fedadagrad",
          "median", "trimmed_mean", "krum",    "multikrum"};
}

absl::Status ValidateStrategyOptions(const StrategyOptions& o,
                                     int min_updates) {
  const std::string& n = o.name;
  if (!IsOneOf(n, {"fedavg", "fedprox", "fedadam", "fedyogi", "fedadagrad",
                   "median", "trimmed_mean", "krum", "multikrum"})) {
    return Bad(absl::StrCat("unknown strategy '", n, "' (known: ",
                            absl::StrJoin(StrategyNames(), ", "), ")"));
  }
  if (n == "fedprox" && !(o.proximal_mu > 0 && std::isfinite(o.proximal_mu))) {
    return Bad(absl::StrCat("fedprox needs --proximal_mu > 0 (e.g. 0.01), got ",
                            o.proximal_mu));
  }
  if (n != "fedprox" && o.proximal_mu != 0) {
    return Bad(
        absl::StrCat("--proximal_mu is for --strategy=fedprox, not ", n));
  }
  if (IsOneOf(n, {"fedadam", "fedyogi", "fedadagrad"})) {
    if (!(o.server_lr > 0) || !std::isfinite(o.server_lr)) {
      return Bad(absl::StrCat(n, " needs --server_lr > 0, got ", o.server_lr));
    }
    if (!(o.beta1 >= 0 && o.beta1 < 1)) {
      return Bad(absl::StrCat(n, " needs 0 <= --beta1 < 1, got ", o.beta1));
    }
    if (n != "fedadagrad" && !(o.beta2 >= 0 && o.beta2 < 1)) {
      return Bad(absl::StrCat(n, " needs 0 <= --beta2 < 1, got ", o.beta2));
    }
    if (!(o.tau > 0) || !std::isfinite(o.tau)) {
      return Bad(absl::StrCat(n,
                              " needs --tau > 0 (adaptivity; e.g. 1e-3), "
                              "got ",
                              o.tau));
    }
  }
  if (n == "trimmed_mean" && !(o.trim_fraction >= 0 && o.trim_fraction < 0.5)) {
    return Bad(
        absl::StrCat("trimmed_mean needs 0 <= --trim_fraction < 0.5, "
                     "got ",
                     o.trim_fraction));
  }
  if (IsOneOf(n, {"krum", "multikrum"})) {
    if (o.byzantine < 0) {
      return Bad(absl::StrCat(n, " needs --byzantine >= 0, got ", o.byzantine));
    }
    const int needed = 2 * o.byzantine + 3;
    if (min_updates < needed) {
      return Bad(absl::StrCat(
          n, " with --byzantine=", o.byzantine,
          " needs n > 2f + 2, so at "
          "least ",
          needed,
          " updates in every round; the job's rounds may "
          "close with ",
          min_updates,
          " (raise --min_clients, --target_updates or --quorum, or lower "
          "--byzantine)"));
    }
    if (n == "multikrum" &&
        (o.krum_keep < 1 || o.krum_keep > min_updates - o.byzantine)) {
      return Bad(absl::StrCat("multikrum needs 1 <= --krum_keep <= n - f (",
                              min_updates - o.byzantine, " for rounds of ",
                              min_updates, "), got ", o.krum_keep));
    }
    if (n == "krum" && o.krum_keep > 1) {
      return Bad("--krum_keep > 1 is multikrum; krum keeps one update");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(
    const StrategyOptions& o, const runtime::NamedTensors& model) {
  // The round sizes are the caller's to check (ValidateStrategyOptions with
  // the job's smallest round); here only the parameters.
  if (absl::Status s =
          ValidateStrategyOptions(o, std::numeric_limits<int>::max());
      !s.ok()) {
    return s;
  }
  if (IsOneOf(o.name, {"fedavg", "fedprox"})) {
    return std::unique_ptr<Strategy>(std::make_unique<MeanStrategy>(o.name));
  }
  if (IsOneOf(o.name, {"fedadam", "fedyogi", "fedadagrad"})) {
    return MakeServerOptimizer(o, model);
  }
  if (IsOneOf(o.name, {"median", "trimmed_mean"})) {
    return MakeRobustMean(o);
  }
  return MakeKrum(o);
}

}  // namespace fedberry::server
