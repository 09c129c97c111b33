#include "base/lock_checks.h"

#include "absl/synchronization/mutex.h"

namespace fedberry::base {

void SkipMutexDeadlockChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace fedberry::base
