#include "runtime/lock_checks.h"

#include "absl/synchronization/mutex.h"

namespace fedberry::runtime {

void SkipMutexDeadlockChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace fedberry::runtime
