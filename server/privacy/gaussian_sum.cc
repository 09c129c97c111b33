#include "server/privacy/gaussian_sum.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/status_macros.h"
#include "runtime/update_clip.h"

namespace fedberry::server {
namespace {

class GaussianSumRound : public RoundAggregator {
 public:
  GaussianSumRound(std::unique_ptr<RoundAggregator> rule,
                   std::shared_ptr<const runtime::NamedTensors> global,
                   const DpOptions& options, at::Generator generator,
                   std::shared_ptr<ClipCounts> counts)
      : rule_(std::move(rule)),
        global_(std::move(global)),
        options_(options),
        generator_(std::move(generator)),
        counts_(std::move(counts)) {
    for (const auto& t : *global_) {
      sum_.push_back(t.tensor.is_floating_point()
                         ? torch::zeros(t.tensor.sizes(), torch::kFloat64)
                         : at::Tensor());
    }
    if (counts_) *counts_ = ClipCounts{};
  }

  absl::Status Add(const runtime::NamedTensors& update,
                   double /*weight*/) override {
    ASSIGN_OR_RETURN(const double norm, runtime::UpdateNorm(update, *global_));
    const double scale = norm > options_.clip ? options_.clip / norm : 1.0;
    for (size_t i = 0; i < update.size(); ++i) {
      if (!sum_[i].defined()) continue;
      sum_[i] += (update[i].tensor.to(torch::kFloat64) -
                  (*global_)[i].tensor.to(torch::kFloat64)) *
                 scale;
    }
    ++updates_;
    if (counts_) {
      ++counts_->updates;
      if (norm >= kClipReached * options_.clip) ++counts_->clipped;
    }
    return absl::OkStatus();
  }
  int updates() const override { return updates_; }
  void Expect(double updates) override { expected_ = updates; }

  absl::StatusOr<runtime::NamedTensors> Result() override {
    if (updates_ == 0) {
      return absl::FailedPreconditionError("the round has no update");
    }
    // Without an expectation (a caller that never set one), the round's own
    // count: still bounded, as every update was clipped.
    const double denominator = expected_ > 0 ? expected_ : updates_;
    const double stddev = options_.noise_multiplier * options_.clip;
    runtime::NamedTensors next;
    for (size_t i = 0; i < global_->size(); ++i) {
      const at::Tensor& g = (*global_)[i].tensor;
      if (!sum_[i].defined()) {
        next.push_back({(*global_)[i].name, g.clone()});
        continue;
      }
      at::Tensor noise = at::normal(0.0, stddev, sum_[i].sizes(), generator_,
                                    torch::dtype(torch::kFloat64));
      at::Tensor mean = (sum_[i] + noise) / denominator;
      next.push_back({(*global_)[i].name,
                      (g.to(torch::kFloat64) + mean).to(g.scalar_type())});
    }
    sum_.clear();  // the noise is drawn once
    RETURN_IF_ERROR(rule_->Add(next, 1.0));
    return rule_->Result();
  }
  RoundAggregator& rule() { return *rule_; }

 private:
  std::unique_ptr<RoundAggregator> rule_;
  std::shared_ptr<const runtime::NamedTensors> global_;
  const DpOptions options_;
  at::Generator generator_;
  std::shared_ptr<ClipCounts> counts_;
  std::vector<at::Tensor> sum_;  // float64; undefined for integer tensors
  int updates_ = 0;
  double expected_ = 0;
};

// A round's noise seed: fresh entropy; or, for tests, the fixed seed mixed
// with the round's model (FNV-1a over its bytes), so a restarted server
// that reopens a round draws that round's noise again.
uint64_t NoiseSeed(uint64_t seed, const runtime::NamedTensors& global) {
  if (seed == 0) {
    std::random_device entropy;
    return (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  }
  uint64_t h = 14695981039346656037ull ^ seed;
  for (const auto& t : global) {
    const at::Tensor c = t.tensor.contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    for (size_t i = 0; i < c.nbytes(); ++i) {
      h = (h ^ bytes[i]) * 1099511628211ull;
    }
  }
  return h;
}

class GaussianSumStrategy : public Strategy {
 public:
  GaussianSumStrategy(std::unique_ptr<Strategy> rule, const DpOptions& options,
                      std::shared_ptr<ClipCounts> counts)
      : rule_(std::move(rule)), options_(options), counts_(std::move(counts)) {}

  const std::string& name() const override { return rule_->name(); }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    ASSIGN_OR_RETURN(std::unique_ptr<RoundAggregator> round,
                     rule_->BeginRound(global));
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(
        NoiseSeed(options_.noise_seed, *global));
    return std::make_unique<GaussianSumRound>(std::move(round),
                                              std::move(global), options_,
                                              std::move(generator), counts_);
  }
  void Commit(RoundAggregator& round) override {
    rule_->Commit(static_cast<GaussianSumRound&>(round).rule());
  }
  runtime::NamedTensors State() const override { return rule_->State(); }
  absl::Status Restore(const runtime::NamedTensors& state) override {
    return rule_->Restore(state);
  }
  int MinUpdates() const override { return 1; }

 private:
  std::unique_ptr<Strategy> rule_;
  const DpOptions options_;
  std::shared_ptr<ClipCounts> counts_;
};

}  // namespace

std::unique_ptr<Strategy> AddGaussianNoise(std::unique_ptr<Strategy> rule,
                                           const DpOptions& options,
                                           std::shared_ptr<ClipCounts> counts) {
  return std::make_unique<GaussianSumStrategy>(std::move(rule), options,
                                               std::move(counts));
}

}  // namespace fedberry::server
