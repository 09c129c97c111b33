#include "server/strategy/server_optimizer.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/strategy/fedavg.h"

namespace fedberry::server {
namespace {

enum class Rule { kAdam, kYogi, kAdagrad };

constexpr char kMoment1[] = "m/";
constexpr char kMoment2[] = "v/";
constexpr char kSteps[] = "steps";

class ServerOptimizer;

class ServerOptimizerRound : public RoundAggregator {
 public:
  ServerOptimizerRound(const ServerOptimizer& optimizer,
                       std::shared_ptr<const runtime::NamedTensors> global)
      : optimizer_(optimizer), global_(std::move(global)), sum_(*global_) {}

  absl::Status Add(const runtime::NamedTensors& update,
                   double weight) override {
    return sum_.AddValidated(update, weight);
  }
  int updates() const override { return sum_.updates(); }
  absl::StatusOr<runtime::NamedTensors> Result() override;

  // The moments after this round's step (set by Result).
  runtime::NamedTensors m, v;

 private:
  const ServerOptimizer& optimizer_;
  std::shared_ptr<const runtime::NamedTensors> global_;
  FedAvg sum_;
};

class ServerOptimizer : public Strategy {
 public:
  ServerOptimizer(const StrategyOptions& o, const runtime::NamedTensors& model)
      : name_(o.name), options_(o) {
    rule_ = o.name == "fedyogi"      ? Rule::kYogi
            : o.name == "fedadagrad" ? Rule::kAdagrad
                                     : Rule::kAdam;
    for (size_t i = 0; i < model.size(); ++i) {
      const at::Tensor& t = model[i].tensor;
      const bool parameter =
          o.parameter_count < 0 || static_cast<int>(i) < o.parameter_count;
      stepped_.push_back(parameter && t.is_floating_point());
      if (stepped_.back()) {
        m_.push_back({model[i].name, at::zeros(t.sizes(), at::kFloat)});
        v_.push_back({model[i].name, at::zeros(t.sizes(), at::kFloat)});
      }
    }
  }

  const std::string& name() const override { return name_; }

  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    if (global->size() != stepped_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": the global model has ", global->size(),
          " tensors; the strategy was made for ", stepped_.size()));
    }
    return std::make_unique<ServerOptimizerRound>(*this, std::move(global));
  }

  void Commit(RoundAggregator& round) override {
    auto& r = static_cast<ServerOptimizerRound&>(round);
    if (r.m.size() == m_.size() && r.v.size() == v_.size()) {
      m_ = std::move(r.m);
      v_ = std::move(r.v);
      ++steps_;
    }
  }

  runtime::NamedTensors State() const override {
    runtime::NamedTensors out;
    for (const auto& t : m_) out.push_back({kMoment1 + t.name, t.tensor});
    for (const auto& t : v_) out.push_back({kMoment2 + t.name, t.tensor});
    out.push_back({kSteps, at::tensor({steps_}, at::kLong)});
    return out;
  }

  absl::Status Restore(const runtime::NamedTensors& state) override {
    const size_t moments = m_.size() + v_.size();
    if (state.size() != moments + 1 || state.back().name != kSteps ||
        state.back().tensor.scalar_type() != at::kLong ||
        state.back().tensor.numel() != 1 ||
        state.back().tensor.item<int64_t>() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, " state has ", state.size(), " tensors; expected ",
          moments + 1,
          " (its two moments of each parameter, then its step count)"));
    }
    runtime::NamedTensors m, v;
    for (size_t i = 0; i < moments; ++i) {
      const bool first = i < m_.size();
      const runtime::NamedTensor& want = first ? m_[i] : v_[i - m_.size()];
      const std::string name =
          absl::StrCat(first ? kMoment1 : kMoment2, want.name);
      const at::Tensor& t = state[i].tensor;
      if (state[i].name != name || !t.sizes().equals(want.tensor.sizes()) ||
          t.scalar_type() != at::kFloat) {
        return absl::InvalidArgumentError(
            absl::StrCat(name_, " state tensor ", i, " is '", state[i].name,
                         "' ", c10::str(t.sizes()), "; expected '", name, "' ",
                         c10::str(want.tensor.sizes()), " float32"));
      }
      (first ? m : v).push_back({want.name, t.clone()});
    }
    m_ = std::move(m);
    v_ = std::move(v);
    steps_ = state.back().tensor.item<int64_t>();
    return absl::OkStatus();
  }

  Rule rule() const { return rule_; }
  const StrategyOptions& options() const { return options_; }
  const std::vector<bool>& stepped() const { return stepped_; }
  const runtime::NamedTensors& m() const { return m_; }
  const runtime::NamedTensors& v() const { return v_; }
  int64_t steps() const { return steps_; }

 private:
  std::string name_;
  StrategyOptions options_;
  Rule rule_;
  std::vector<bool> stepped_;    // per model tensor: a parameter the rule steps
  runtime::NamedTensors m_, v_;  // of the stepped tensors, in model order
  int64_t steps_ = 0;
};

// A float64 copy that in-place arithmetic may change (to() alone returns
// the tensor itself when it is float64 already).
at::Tensor Float64Copy(const at::Tensor& t) {
  return t.to(at::kDouble, /*non_blocking=*/false, /*copy=*/true);
}

absl::StatusOr<runtime::NamedTensors> ServerOptimizerRound::Result() {
  absl::StatusOr<runtime::NamedTensors> mean = sum_.Result();
  if (!mean.ok()) return mean.status();
  const StrategyOptions& o = optimizer_.options();
  // Bias correction, as in Adam: m and v start at 0, and a job of a few
  // rounds must not spend them warming up.
  const double t = static_cast<double>(optimizer_.steps() + 1);
  const double m_scale = 1 / (1 - std::pow(o.beta1, t));
  const double v_scale = optimizer_.rule() == Rule::kAdagrad
                             ? 1.0
                             : 1 / (1 - std::pow(o.beta2, t));
  at::NoGradGuard no_grad;
  runtime::NamedTensors out;
  m.clear();
  v.clear();
  size_t k = 0;  // index into the moments
  for (size_t i = 0; i < global_->size(); ++i) {
    if (!optimizer_.stepped()[i]) {
      out.push_back((*mean)[i]);
      continue;
    }
    // In float64: d can be tiny next to x, and d^2 tinier still. In place
    // where possible: a large tensor's float64 copies are what the round's
    // peak memory is made of.
    const at::Tensor x = (*global_)[i].tensor.to(at::kDouble);
    at::Tensor d = Float64Copy((*mean)[i].tensor).sub_(x);
    at::Tensor mk = Float64Copy(optimizer_.m()[k].tensor);
    mk.mul_(o.beta1).add_(d, 1 - o.beta1);
    const at::Tensor& d2 = d.mul_(d);
    at::Tensor vk = Float64Copy(optimizer_.v()[k].tensor);
    switch (optimizer_.rule()) {
      case Rule::kAdam:
        vk.mul_(o.beta2).add_(d2, 1 - o.beta2);
        break;
      case Rule::kYogi:
        vk.sub_(at::sub(vk, d2).sign_().mul_(d2), 1 - o.beta2);
        break;
      case Rule::kAdagrad:
        vk.add_(d2);
        break;
    }
    d = vk.mul(v_scale).sqrt_().add_(o.tau);  // d's storage is freed here
    const at::Tensor next = mk.mul(o.server_lr * m_scale).div_(d).add_(x);
    out.push_back({(*global_)[i].name,
                   next.to((*global_)[i].tensor.scalar_type()).contiguous()});
    m.push_back({(*global_)[i].name, mk.to(at::kFloat)});
    v.push_back({(*global_)[i].name, vk.to(at::kFloat)});
    ++k;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Strategy>> MakeServerOptimizer(
    const StrategyOptions& options, const runtime::NamedTensors& model) {
  return std::unique_ptr<Strategy>(
      std::make_unique<ServerOptimizer>(options, model));
}

}  // namespace fedberry::server
