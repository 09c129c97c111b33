#include "privacy/rdp_accountant.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fedberry::privacy {
namespace {

// The bracket's width, relative to its upper end, at which
// NoiseMultiplierFor stops bisecting.
constexpr double kNoiseRelativeTolerance = 1e-4;
// The bracket search's limit either way from 1, as dp_accounting's.
constexpr int kMaxBracketDoublings = 30;

absl::Status CheckOrders(const std::vector<double>& orders) {
  if (orders.empty()) {
    return absl::InvalidArgumentError("the accountant has no Rényi orders");
  }
  for (size_t i = 0; i < orders.size(); ++i) {
    if (!(orders[i] > 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Rényi order ", orders[i], " (index ", i, ") must be above 1"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRound(double q, double noise_multiplier) {
  if (!(q >= 0 && q <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sampling rate must be in [0, 1], got ", q));
  }
  if (!(noise_multiplier >= 0) || !std::isfinite(noise_multiplier)) {
    return absl::InvalidArgumentError(
        absl::StrCat("noise multiplier must be a finite number >= 0, got ",
                     noise_multiplier));
  }
  return absl::OkStatus();
}

// The smallest z in (0, 2^30] with within(z), to kNoiseRelativeTolerance:
// the upper end of the final bracket, so within() holds at the answer and
// fails 1e-4 (relative) below it. within() must be monotone (more noise
// never spends more). `unreachable` is the NotFound message.
template <typename Within>
absl::StatusOr<double> SmallestNoiseWithin(Within within,
                                           const std::string& unreachable) {
  absl::StatusOr<bool> at_one = within(1.0);
  if (!at_one.ok()) return at_one.status();
  double below = 0;  // within() fails here; 0 until one is found
  double above = 0;  // within() holds here; 0 until one is found
  (*at_one ? above : below) = 1;
  // Halve from 1 until within() fails, or double until it holds.
  for (int k = 1; k <= kMaxBracketDoublings && (below == 0 || above == 0);
       ++k) {
    const double z = std::ldexp(1.0, *at_one ? -k : k);
    absl::StatusOr<bool> ok = within(z);
    if (!ok.ok()) return ok.status();
    (*ok ? above : below) = z;
  }
  if (above == 0) return absl::NotFoundError(unreachable);
  if (below == 0) return above;  // within the target even at 2^-30
  while (above - below > kNoiseRelativeTolerance * above) {
    const double middle = (below + above) / 2;
    absl::StatusOr<bool> ok = within(middle);
    if (!ok.ok()) return ok.status();
    (*ok ? above : below) = middle;
  }
  return above;
}

}  // namespace

RdpAccountant::RdpAccountant(std::vector<double> orders)
    : orders_(std::move(orders)), rdp_(orders_.size(), 0.0) {}

absl::Status RdpAccountant::Compose(double q, double noise_multiplier,
                                    int64_t steps) {
  if (absl::Status s = CheckOrders(orders_); !s.ok()) return s;
  if (absl::Status s = CheckRound(q, noise_multiplier); !s.ok()) return s;
  if (steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps must be >= 0, got ", steps));
  }
  if (steps > std::numeric_limits<int64_t>::max() - steps_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "composing ", steps, " steps after ", steps_, " overflows the count"));
  }
  if (steps == 0) return absl::OkStatus();
  const std::vector<double> one =
      SubsampledGaussianRdp(q, noise_multiplier, orders_);
  // steps x one round, as dp_accounting composes a SelfComposedDpEvent.
  for (size_t i = 0; i < rdp_.size(); ++i) {
    rdp_[i] += static_cast<double>(steps) * one[i];
  }
  steps_ += steps;
  return absl::OkStatus();
}

absl::StatusOr<PrivacySpent> RdpAccountant::Spent(double delta) const {
  if (absl::Status s = CheckOrders(orders_); !s.ok()) return s;
  return EpsilonFromRdp(orders_, rdp_, delta);
}

absl::StatusOr<PrivacySpent> RdpAccountant::SpentAfter(double q,
                                                       double noise_multiplier,
                                                       double delta) const {
  RdpAccountant next = *this;
  if (absl::Status s = next.Compose(q, noise_multiplier); !s.ok()) return s;
  return next.Spent(delta);
}

absl::Status RdpAccountant::Restore(const std::vector<double>& rdp,
                                    int64_t steps) {
  if (rdp.size() != orders_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the saved accountant has ", rdp.size(),
                     " RDP values; this one has ", orders_.size(), " orders"));
  }
  if (steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the saved accountant's steps is ", steps, "; it must be >= 0"));
  }
  for (size_t i = 0; i < rdp.size(); ++i) {
    if (!(rdp[i] >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the saved RDP at order ", orders_[i], " (index ", i,
                       ") is ", rdp[i], "; it must be a number >= 0"));
    }
    if (rdp[i] > 0 && steps == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the saved RDP at order ", orders_[i], " (index ", i,
                       ") is ", rdp[i], " but the saved steps is 0"));
    }
  }
  rdp_ = rdp;
  steps_ = steps;
  return absl::OkStatus();
}

absl::Status RdpAccountant::Restore(const std::vector<double>& orders,
                                    const std::vector<double>& rdp,
                                    int64_t steps) {
  if (orders.size() != orders_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the saved accountant has ", orders.size(),
                     " orders; this one has ", orders_.size()));
  }
  for (size_t i = 0; i < orders.size(); ++i) {
    if (orders[i] != orders_[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("the saved accountant's order at index ", i, " is ",
                       orders[i], "; this one's is ", orders_[i]));
    }
  }
  return Restore(rdp, steps);
}

absl::StatusOr<double> NoiseMultiplierFor(double q, int64_t steps, double delta,
                                          double target_epsilon,
                                          const std::vector<double>& orders) {
  if (absl::Status s = CheckOrders(orders); !s.ok()) return s;
  if (absl::Status s = CheckRound(q, 0); !s.ok()) return s;
  if (steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps must be >= 0, got ", steps));
  }
  if (!(delta > 0 && delta < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("delta must be in (0, 1), got ", delta));
  }
  if (!(target_epsilon > 0) || !std::isfinite(target_epsilon)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target epsilon must be a finite number > 0, got ", target_epsilon));
  }
  if (q == 0 || steps == 0) return 0.0;
  // Whether `steps` rounds at noise z stay within the target.
  auto within = [&](double z) -> absl::StatusOr<bool> {
    RdpAccountant accountant(orders);
    if (absl::Status s = accountant.Compose(q, z, steps); !s.ok()) return s;
    absl::StatusOr<PrivacySpent> spent = accountant.Spent(delta);
    if (!spent.ok()) return spent.status();
    return spent->epsilon <= target_epsilon;
  };
  return SmallestNoiseWithin(
      within, absl::StrCat("no noise multiplier up to 2^30 keeps ", steps,
                           " rounds at sampling rate ", q, " within epsilon ",
                           target_epsilon, " at delta ", delta));
}

}  // namespace fedberry::privacy
