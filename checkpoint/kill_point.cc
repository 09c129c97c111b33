#include "checkpoint/kill_point.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace fedberry::checkpoint {
namespace {

struct Armed {
  std::string prefix;  // "ckpt.*" arms every name starting with "ckpt."
  bool wildcard = false;
  double probability = 1.0;
};

const std::vector<Armed>& Points() {
  static const std::vector<Armed>* points = [] {
    auto* out = new std::vector<Armed>;
    const char* env = std::getenv("FEDBERRY_KILL_POINTS");
    if (env == nullptr) return out;
    for (absl::string_view item : absl::StrSplit(env, ',', absl::SkipEmpty())) {
      std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
      Armed a;
      a.prefix = std::string(parts[0]);
      if (!a.prefix.empty() && a.prefix.back() == '*') {
        a.prefix.pop_back();
        a.wildcard = true;
      }
      if (parts.size() > 1 && !absl::SimpleAtod(parts[1], &a.probability)) {
        a.probability = 1.0;
      }
      out->push_back(a);
    }
    return out;
  }();
  return *points;
}

}  // namespace

void KillPoint(const char* name) {
  const auto& points = Points();
  if (points.empty()) return;
  static std::mutex mu;
  static std::mt19937_64 rng(static_cast<uint64_t>(getpid()) * 2654435761u);
  const std::string n = name;
  for (const Armed& a : points) {
    const bool match = a.wildcard ? n.rfind(a.prefix, 0) == 0 : n == a.prefix;
    if (!match) continue;
    std::lock_guard<std::mutex> lock(mu);
    if (std::uniform_real_distribution<double>(0, 1)(rng) < a.probability) {
      ::kill(::getpid(), SIGKILL);
    }
  }
}

}  // namespace fedberry::checkpoint
