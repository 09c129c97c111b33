// Abseil's lock-order checking, off in the shipped binaries.
//
// Why: Debian builds Abseil without NDEBUG, so every absl::Mutex lock walks
// a process-wide deadlock graph under a global lock, and every destroyed
// Mutex is removed from it. A server with thousands of boards has a mutex
// per parked poll and per stream: a profile of 10,000 emulated boards
// (bench/scale_bench.sh) spent 12% of the server's CPU in
// GraphCycles::GetId, and a loop locking 20,000 mutexes under one outer
// lock ran 7x slower with the checks on. The tests keep the checks, which is
// where a lock-order bug should show.
#ifndef FEDBERRY_BASE_LOCK_CHECKS_H_
#define FEDBERRY_BASE_LOCK_CHECKS_H_

namespace fedberry::base {

// Turns Abseil's mutex deadlock detection off for the process. Call first
// thing in main(), before any thread starts.
void SkipMutexDeadlockChecks();

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_LOCK_CHECKS_H_
