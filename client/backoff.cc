#include "client/backoff.h"

#include <algorithm>

namespace fedberry::client {

Backoff::Backoff(BackoffOptions options, uint64_t seed)
    : options_(options), current_(options.initial), rng_(seed) {}

absl::Duration Backoff::Next() {
  ++attempts_;
  std::uniform_real_distribution<double> spread(1.0 - options_.jitter,
                                                1.0 + options_.jitter);
  absl::Duration wait = current_ * spread(rng_);
  current_ = std::min(current_ * options_.multiplier, options_.max);
  return wait;
}

void Backoff::Reset() {
  current_ = options_.initial;
  attempts_ = 0;
}

}  // namespace fedberry::client
