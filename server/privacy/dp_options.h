// Differential privacy's settings for a job (fedberry-server --dp_*), and
// the checks that refuse combinations that would void its guarantee.
//
// The guarantee is user-level central DP: a board's whole data is the unit
// protected, the gateway is trusted, every board's update (its difference
// from the round's model) is clipped to `clip` in L2 norm, boards are
// sampled independently with probability `sampling_rate`, and the sum of
// the clipped updates gets Gaussian noise of standard deviation
// `noise_multiplier` * `clip` (DP-FedAvg, McMahan et al. 2018).
#ifndef FEDBERRY_SERVER_PRIVACY_DP_OPTIONS_H_
#define FEDBERRY_SERVER_PRIVACY_DP_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"

namespace fedberry::server {

struct DpOptions {
  double clip = 0;              // C, > 0 under DP
  double noise_multiplier = 0;  // z; 0: DP is off
  double sampling_rate = 1;     // q, each available board's chance a round
  double delta = 1e-5;
  double target_epsilon = 0;  // > 0: the job ends before exceeding it
  // Adaptive clipping (Andrew et al. 2021, geometric update, TensorFlow
  // Federated's defaults): `clip` is the initial bound, which follows the
  // `target_quantile` of the update norms at `clip_learning_rate`, from a
  // noisy count of the updates within the bound (noise standard deviation
  // `clipped_count_stddev`; 0: 0.05 x the round's expected cohort, at least
  // the noise multiplier). `noise_multiplier` is then the total: the
  // updates get (z^-2 - (2 x clipped_count_stddev)^-2)^-1/2.
  bool adaptive_clip = false;
  // Local DP, for a gateway that is not trusted: each board adds the noise
  // (noise_multiplier x clip) to its own clipped update before sending it,
  // and the server only averages. The guarantee is then each board's own,
  // over the rounds it took part in (LocalPrivacyBudget).
  bool local = false;
  double target_quantile = 0.5;
  double clip_learning_rate = 0.2;
  double clipped_count_stddev = 0;
  // Seeds the noise, with each round's model, so a reopened round draws
  // the same noise; 0: fresh entropy every round (a fixed seed is for
  // tests: noise an observer can replay protects nothing).
  uint64_t noise_seed = 0;

  bool enabled() const { return noise_multiplier > 0 || clip > 0; }
};

// InvalidArgument naming the flag when the settings are out of range
// (clip and noise multiplier come together), the strategy is not one whose
// output is a function of the noisy mean (robust rules look at single
// updates), or the model has floating buffers (batch norm statistics would
// travel unclipped and unnoised).
absl::Status CheckDpOptions(const DpOptions& options,
                            const std::string& strategy,
                            const runtime::NamedTensors& model,
                            int parameter_count);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PRIVACY_DP_OPTIONS_H_
