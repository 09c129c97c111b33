#include "client/watchdog_gate.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "client/memory_release.h"

namespace fedberry::client {

using runtime::WatchdogEvent;
using runtime::WatchdogState;

WatchdogGate::WatchdogGate(runtime::WatchdogOptions options,
                           std::function<runtime::MemoryReadings()> read,
                           Clock& clock, WatchdogGateHooks hooks)
    : read_(std::move(read)),
      clock_(clock),
      hooks_(std::move(hooks)),
      watchdog_(std::move(options), clock) {
  if (!hooks_.trim) hooks_.trim = [] { malloc_trim(0); };
}

void WatchdogGate::Poll() {
  const runtime::MemoryReadings readings = read_();
  runtime::WatchdogStep step;
  absl::Duration paused_for;
  {
    absl::MutexLock lock(&mu_);
    step = watchdog_.Step(readings);
    if (step.events.empty()) return;
    paused_for = watchdog_.counters().paused;
    if (step.state == WatchdogState::kReleased) release_reason_ = step.reason;
    if (absl::c_linear_search(step.events, WatchdogEvent::kResume)) {
      pause_ended_ = clock_.Now();
    }
    changed_.SignalAll();
  }
  for (WatchdogEvent e : step.events) {
    switch (e) {
      case WatchdogEvent::kShrink:
        spdlog::info(
            "watchdog: {}; splitting each batch into {} micro-batches "
            "(same effective batch)",
            step.reason, step.micro_batches);
        break;
      case WatchdogEvent::kRestore:
        spdlog::info("watchdog: {}; whole batches again", step.reason);
        break;
      case WatchdogEvent::kPause:
        spdlog::warn(
            "watchdog: pausing training at the next batch boundary: {}",
            step.reason);
        if (hooks_.on_pause) hooks_.on_pause(true, paused_for);
        break;
      case WatchdogEvent::kResume:
        spdlog::info("watchdog: resuming training: {}", step.reason);
        if (hooks_.on_pause) hooks_.on_pause(false, paused_for);
        break;
      case WatchdogEvent::kStillPaused:
        spdlog::warn("watchdog: {}", step.reason);
        if (hooks_.on_pause) hooks_.on_pause(true, paused_for);
        break;
      case WatchdogEvent::kRelease:
        spdlog::error(
            "watchdog: releasing memory: {}; training is checkpointed at the "
            "next batch boundary and the process frees its memory",
            step.reason);
        break;
    }
  }
}

int WatchdogGate::micro_batches() {
  absl::MutexLock lock(&mu_);
  return watchdog_.micro_batches();
}

absl::Status WatchdogGate::AtBatchBoundary(const std::atomic<bool>& stop) {
  absl::MutexLock lock(&mu_);
  if (watchdog_.state() == WatchdogState::kPaused) {
    ++boundary_waits_;
    trainer_waiting_ = true;
    mu_.Unlock();
    hooks_.trim();
    // Training really stops now: tell the server (the pause itself may
    // have begun before this round's task arrived).
    if (hooks_.on_pause) hooks_.on_pause(true, counters().paused);
    spdlog::info(
        "watchdog: training paused at a batch boundary; freed heap "
        "returned to the OS");
    mu_.Lock();
    while (watchdog_.state() == WatchdogState::kPaused && !stop.load()) {
      // Wakes on every state change; the timeout only notices `stop`.
      changed_.WaitWithTimeout(&mu_, absl::Milliseconds(100));
    }
    trainer_waiting_ = false;
  }
  if (watchdog_.state() == WatchdogState::kReleased) {
    return MemoryReleaseError(release_reason_);
  }
  return absl::OkStatus();
}

absl::Status WatchdogGate::Release(absl::Status release) {
  if (hooks_.on_release) hooks_.on_release();
  if (!hooks_.dump) return release;
  spdlog::warn(
      "watchdog: training is checkpointed; asking the supervisor for a CRIU "
      "dump of this process to free its memory");
  if (absl::Status dumped = hooks_.dump(); !dumped.ok()) {
    spdlog::warn(
        "watchdog: no CRIU dump ({}); exiting to free the memory instead, "
        "from the checkpoint just written",
        std::string(dumped.message()));
    return release;
  }
  absl::Duration paused_for;
  {
    absl::MutexLock lock(&mu_);
    watchdog_.Restored();
    pause_ended_ = clock_.Now();
    paused_for = watchdog_.counters().paused;
    changed_.SignalAll();
  }
  spdlog::info(
      "watchdog: restored from the CRIU dump after memory came back; "
      "training goes on from the same batch");
  if (hooks_.on_pause) hooks_.on_pause(false, paused_for);
  return absl::OkStatus();
}

WatchdogState WatchdogGate::state() const {
  absl::MutexLock lock(&mu_);
  return watchdog_.state();
}

runtime::WatchdogCounters WatchdogGate::counters() const {
  absl::MutexLock lock(&mu_);
  return watchdog_.counters();
}

std::string WatchdogGate::BusyReason() {
  absl::MutexLock lock(&mu_);
  if (watchdog_.state() != runtime::WatchdogState::kRunning) {
    return absl::StrCat("memory pressure: training is ",
                        runtime::WatchdogStateName(watchdog_.state()));
  }
  if (watchdog_.micro_batches() > 1) {
    return "memory pressure: training runs in shrunk batches";
  }
  return "";
}

std::optional<absl::Time> WatchdogGate::LastPaused() const {
  absl::MutexLock lock(&mu_);
  if (watchdog_.state() != WatchdogState::kRunning) return clock_.Now();
  return pause_ended_;
}

int WatchdogGate::boundary_waits() const {
  absl::MutexLock lock(&mu_);
  return boundary_waits_;
}

bool WatchdogGate::trainer_waiting() const {
  absl::MutexLock lock(&mu_);
  return trainer_waiting_;
}

}  // namespace fedberry::client
