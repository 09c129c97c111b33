// Capped exponential backoff with jitter, for reconnecting to a server that
// is down or restarting: waits grow initial, 2x, 4x ... up to `max`, each
// spread by +-jitter so a fleet does not reconnect in lockstep.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_CLIENT_BACKOFF_H_
#define FEDBERRY_CLIENT_BACKOFF_H_

#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace fedberry::client {

struct BackoffOptions {
  absl::Duration initial = absl::Milliseconds(500);
  absl::Duration max = absl::Seconds(30);
  double multiplier = 2.0;
  double jitter = 0.2;  // each wait is scaled by a factor in [1-j, 1+j]
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}, uint64_t seed = 0);

  // The next wait; never more than options.max * (1 + jitter).
  absl::Duration Next();
  // After a success: the next wait starts from `initial` again.
  void Reset();
  int attempts() const { return attempts_; }

 private:
  BackoffOptions options_;
  absl::Duration current_;
  int attempts_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_BACKOFF_H_
