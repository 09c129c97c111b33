// The central mechanism of DP-FedAvg (McMahan et al. 2018) around the job's
// strategy: each decoded update's difference from the round's model is
// clipped to the bound (again: a board or an encoding may have sent more),
// the differences are summed unweighted, Gaussian noise of standard
// deviation noise_multiplier * clip is added to every coordinate of the
// sum, and the sum is divided by the round's expected cohort size (q * n,
// RoundAggregator::Expect), not by who reported, so one board's presence
// changes the result by at most clip / (q * n) before the noise. With
// adaptive clipping the bound moves after every round towards a quantile of
// the update norms, estimated from a noisy count (see DpOptions). Sample
// counts play no part: a board's weight would reveal its data's size.
// The job's rule then takes the noisy mean as a single update (fedavg:
// the next model; a server optimizer: its pseudo-gradient). Integer
// tensors keep the round's values.
// Thread-safety: as a Strategy's.
#ifndef FEDBERRY_SERVER_PRIVACY_GAUSSIAN_SUM_H_
#define FEDBERRY_SERVER_PRIVACY_GAUSSIAN_SUM_H_

#include <memory>

#include "server/privacy/dp_options.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// The bound, shared by the mechanism (which moves it, when adaptive) and the
// budget (which puts it in each round's config and in the checkpoint), and
// what the last aggregated round's clipping did, for its report.
struct ClipState {
  double clip = 0;        // the next round's bound
  double round_clip = 0;  // the bound the last aggregated round used
  int updates = 0;
  int clipped = 0;  // reached the bound (within kClipReached)
};

// An update counts as clipped when its decoded norm is at least this share
// of the bound: boards clip before a lossy encoding, which moves the norm a
// little either way.
inline constexpr double kClipReached = 0.999;

// The clipped count's noise for a round expecting `expected` boards (0
// without adaptive clipping).
double ClippedCountStddev(const DpOptions& options, double expected);

// The noise multiplier the updates get: `options.noise_multiplier`, or
// under adaptive clipping what is left of it beside the count's noise
// `count_stddev` (TensorFlow Federated's adaptive_clip_noise_params).
double ValueNoiseMultiplier(const DpOptions& options, double count_stddev);

// `rule` under the mechanism of `options`, with the bound of `state` (may
// be null; its clip set to options.clip when 0), which every round updates.
std::unique_ptr<Strategy> AddGaussianNoise(std::unique_ptr<Strategy> rule,
                                           const DpOptions& options,
                                           std::shared_ptr<ClipState> state);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PRIVACY_GAUSSIAN_SUM_H_
