#include "server/privacy/gaussian_sum.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/privacy/difference_sum.h"
#include "server/privacy/forwarded_sum.h"
#include "server/strategy/strategy_decorator.h"

namespace fedberry::server {
namespace {

class GaussianSumRound : public RoundDecorator {
 public:
  GaussianSumRound(std::unique_ptr<RoundAggregator> rule,
                   std::shared_ptr<const runtime::NamedTensors> global,
                   const DpOptions& options, at::Generator generator,
                   std::shared_ptr<ClipState> state)
      : RoundDecorator(std::move(rule)),
        sum_(std::move(global)),
        options_(options),
        clip_(state->clip),
        generator_(std::move(generator)),
        state_(std::move(state)) {}

  absl::Status Add(const runtime::NamedTensors& update,
                   double /*weight*/) override {
    FEDBERRY_ASSIGN_OR_RETURN(const double norm, sum_.Norm(update));
    // Local DP: the board clipped and noised; a second clip would cut the
    // noise, not the update.
    sum_.Add(update, !options_.local && norm > clip_ ? clip_ / norm : 1.0);
    ++updates_;
    if (!options_.local && norm >= kClipReached * clip_) ++clipped_;
    return absl::OkStatus();
  }

  // A site gateway's sum of `updates` clipped updates: bounded by updates x
  // the clip, so one of its boards moves it by at most the clip, as a
  // direct board moves the root's sum. It adds no noise: the noise goes
  // once onto the root's total.
  absl::Status AddSum(const runtime::NamedTensors& sum, int updates,
                      int clipped) override {
    FEDBERRY_RETURN_IF_ERROR(
        AddBoundedSum(sum_, sum, updates, options_.local ? 0.0 : clip_));
    updates_ += updates;
    if (!options_.local) clipped_ += clipped;
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
    // Local DP: the updates are private already; their mean is.
    const double denominator =
        expected_ > 0 && !options_.local ? expected_ : updates_;
    const double count_stddev = ClippedCountStddev(options_, denominator);
    const double stddev =
        options_.local ? 0
                       : ValueNoiseMultiplier(options_, count_stddev) * clip_;
    // The coordinator asks once: the noise is drawn once.
    if (stddev > 0) sum_.AddNoise(stddev, generator_);
    const runtime::NamedTensors next = sum_.Over(denominator);
    Account(denominator, count_stddev);
    FEDBERRY_RETURN_IF_ERROR(RoundDecorator::Add(next, 1.0));
    return RoundDecorator::Result();
  }

 private:
  // The round's clip counts into the shared state and, under adaptive
  // clipping, the next bound from the noisy share of updates within this
  // one: clip * exp(-rate * (share - target)).
  void Account(double denominator, double count_stddev) {
    state_->round_clip = clip_;
    state_->updates = updates_;
    state_->clipped = clipped_;
    if (!options_.adaptive_clip) return;
    // Each update counts +1/2 within the bound, -1/2 beyond it: the count's
    // sensitivity is 1/2, as the split of the noise multiplier assumes.
    const double centred = (updates_ - clipped_) - 0.5 * updates_;
    const double noise = at::normal(0.0, count_stddev, {1}, generator_,
                                    torch::dtype(torch::kFloat64))
                             .item<double>();
    const double share =
        std::clamp((centred + noise) / denominator + 0.5, 0.0, 1.0);
    state_->clip = clip_ * std::exp(-options_.clip_learning_rate *
                                    (share - options_.target_quantile));
  }

  DifferenceSum sum_;  // of the clipped updates
  const DpOptions options_;
  const double clip_;  // this round's bound
  at::Generator generator_;
  std::shared_ptr<ClipState> state_;
  int updates_ = 0;
  int clipped_ = 0;
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

class GaussianSumStrategy : public StrategyDecorator {
 public:
  GaussianSumStrategy(std::unique_ptr<Strategy> rule, const DpOptions& options,
                      std::shared_ptr<ClipState> state)
      : StrategyDecorator(std::move(rule)),
        options_(options),
        state_(std::move(state)) {
    if (state_->clip <= 0) state_->clip = options_.clip;
  }

  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    FEDBERRY_ASSIGN_OR_RETURN(std::unique_ptr<RoundAggregator> round,
                              rule().BeginRound(global));
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(
        NoiseSeed(options_.noise_seed, *global));
    return std::make_unique<GaussianSumRound>(std::move(round),
                                              std::move(global), options_,
                                              std::move(generator), state_);
  }
  // One noisy mean reaches the rule, whatever its own minimum.
  int MinUpdates() const override { return 1; }

 private:
  const DpOptions options_;
  std::shared_ptr<ClipState> state_;
};

}  // namespace

double ClippedCountStddev(const DpOptions& options, double expected) {
  if (!options.adaptive_clip) return 0;
  if (options.clipped_count_stddev > 0) return options.clipped_count_stddev;
  // TensorFlow Federated's default, raised where it would leave the
  // updates no share of the noise.
  return std::max(0.05 * expected, options.noise_multiplier);
}

double ValueNoiseMultiplier(const DpOptions& options, double count_stddev) {
  const double z = options.noise_multiplier;
  if (!options.adaptive_clip || z <= 0) return z;
  return std::pow(std::pow(z, -2) - std::pow(2 * count_stddev, -2), -0.5);
}

std::unique_ptr<Strategy> AddGaussianNoise(std::unique_ptr<Strategy> rule,
                                           const DpOptions& options,
                                           std::shared_ptr<ClipState> state) {
  if (!state) state = std::make_shared<ClipState>();
  return std::make_unique<GaussianSumStrategy>(std::move(rule), options,
                                               std::move(state));
}

}  // namespace fedberry::server
