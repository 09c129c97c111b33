// Deterministic RandomSources for secagg's tests: the same seed gives the
// same bytes on every host, so shares, boxes and roundings can be pinned;
// and a scripted source that hands out given bytes and then fails, for the
// paths that reject or run out of randomness. Never linked by a binary.
// Thread-safety: not thread-safe (each keeps a position).
#ifndef FEDBERRY_SECAGG_TESTING_FAKE_RANDOM_H_
#define FEDBERRY_SECAGG_TESTING_FAKE_RANDOM_H_

#include <cstdint>
#include <vector>

#include "secagg/random_source.h"

namespace fedberry::secagg::testing {

// SplitMix64's output, little-endian: well spread, not secret.
class SeededRandom : public RandomSource {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  absl::Status Fill(absl::Span<uint8_t> out) override;

 private:
  uint64_t state_;
  uint64_t word_ = 0;
  int left_ = 0;  // bytes of word_ not handed out yet
};

// `bytes` once, in order; then Internal, as a failing RAND_bytes would be.
class ScriptedRandom : public RandomSource {
 public:
  explicit ScriptedRandom(std::vector<uint8_t> bytes)
      : bytes_(std::move(bytes)) {}
  absl::Status Fill(absl::Span<uint8_t> out) override;
  size_t used() const { return used_; }

 private:
  std::vector<uint8_t> bytes_;
  size_t used_ = 0;
};

}  // namespace fedberry::secagg::testing

#endif  // FEDBERRY_SECAGG_TESTING_FAKE_RANDOM_H_
