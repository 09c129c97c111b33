#include "server/staging_pool.h"

#include <ATen/ATen.h>

#include <utility>

namespace fedberry::server {

runtime::NamedTensors StagingPool::Take() {
  absl::MutexLock lock(&mu_);
  if (idle_.empty()) return {};
  runtime::NamedTensors set = std::move(idle_.back());
  idle_.pop_back();
  return set;
}

void StagingPool::Give(runtime::NamedTensors set) {
  if (set.empty()) return;
  for (const auto& t : set) {
    // Refilled in place later: nobody else may still see these bytes.
    if (!t.tensor.defined() || t.tensor.use_count() != 1 ||
        t.tensor.storage().use_count() != 1) {
      return;
    }
  }
  absl::MutexLock lock(&mu_);
  if (static_cast<int>(idle_.size()) < max_sets_) {
    idle_.push_back(std::move(set));
  }
}

int StagingPool::idle() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(idle_.size());
}

}  // namespace fedberry::server
