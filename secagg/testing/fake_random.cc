#include "secagg/testing/fake_random.h"

#include <algorithm>

namespace fedberry::secagg::testing {

absl::Status SeededRandom::Fill(absl::Span<uint8_t> out) {
  for (uint8_t& byte : out) {
    if (left_ == 0) {
      uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word_ = z ^ (z >> 31);
      left_ = 8;
    }
    byte = static_cast<uint8_t>(word_);
    word_ >>= 8;
    --left_;
  }
  return absl::OkStatus();
}

absl::Status ScriptedRandom::Fill(absl::Span<uint8_t> out) {
  if (bytes_.size() - used_ < out.size()) {
    used_ = bytes_.size();
    return absl::InternalError("scripted random bytes ran out");
  }
  std::copy_n(bytes_.begin() + used_, out.size(), out.begin());
  used_ += out.size();
  return absl::OkStatus();
}

}  // namespace fedberry::secagg::testing
