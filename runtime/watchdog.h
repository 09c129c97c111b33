// The memory-pressure watchdog's state machine. It reads nothing itself:
// each Step() is given one set of MemoryReadings and asks the injected Clock
// for the time, so tests drive it with scripted readings and a
// SimulatedClock.
//
//   RUNNING ──(high pressure for pause_hold)──▶ PAUSED
//   PAUSED ──(below the low-water marks for resume_hold)──▶ RUNNING
//   PAUSED ──(not calm for release_after)──▶ RELEASED
//   any ──(critical for critical_hold)──▶ RELEASED
//   RUNNING: soft pressure for soft_hold shrinks the batch (micro_batches >
//   1); the low-water marks for resume_hold restore it.
//
// Entering a state needs the condition to hold over a whole hold time, and
// leaving it needs the opposite (low-water) condition, which sits on the
// safe side of the entering one: a signal oscillating around one threshold
// never flaps. RELEASED: the owner checkpoints and frees memory; only a
// process that comes back whole (a CRIU restore) calls Restored() to run
// again.
// Thread-safety: not thread-safe; the owner serialises calls.
#ifndef FEDBERRY_RUNTIME_WATCHDOG_H_
#define FEDBERRY_RUNTIME_WATCHDOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "runtime/memory_readings.h"

namespace fedberry::runtime {

// An amount of available memory: a share of the total ("15%") or a byte
// count ("150MiB"). Unset: the signal is not watched.
struct MemoryLevel {
  std::optional<double> fraction;  // 0..1
  std::optional<uint64_t> bytes;
  bool set() const { return fraction.has_value() || bytes.has_value(); }
  // True when `r` shows less available memory than this level. False when
  // the readings needed are missing.
  bool Below(const MemoryReadings& r) const;
  std::string ToString() const;
};
// "15%", "0.15" (a share), "150MiB", "150M", "1GiB", "1048576" (bytes),
// "" or "off" (unset). InvalidArgument otherwise.
absl::StatusOr<MemoryLevel> ParseMemoryLevel(absl::string_view text);

struct WatchdogOptions {
  // Soft pressure: shrink the batch.
  MemoryLevel soft_available = {0.25, std::nullopt};
  double soft_psi_some10 = 5;  // % of time stalled (avg10)
  absl::Duration soft_hold = absl::Seconds(2);
  int soft_micro_batches = 2;  // micro-batches per batch under soft pressure
  // High pressure: pause at the next batch boundary.
  MemoryLevel pause_available = {0.15, std::nullopt};
  double pause_psi_some10 = 10;
  std::optional<uint64_t> pause_rss_bytes;  // own RSS above this pauses
  absl::Duration pause_hold = absl::Seconds(3);
  // Low-water marks: every watched signal must be on the safe side of these
  // for resume_hold to resume (and to undo a shrink).
  MemoryLevel resume_available = {0.25, std::nullopt};
  double resume_psi_some10 = 2;
  absl::Duration resume_hold = absl::Seconds(10);
  // Critical: release at once (after critical_hold).
  MemoryLevel critical_available = {0.05, std::nullopt};
  double critical_psi_full10 = 40;
  absl::Duration critical_hold = absl::ZeroDuration();
  // Paused this long without calm: release memory.
  absl::Duration release_after = absl::Seconds(60);
  // False: never release (no checkpoint to come back to); stay paused.
  bool release_enabled = true;
  // While paused, a "still paused" event this often.
  absl::Duration report_every = absl::Seconds(30);
};

// Checks that the levels are ordered (critical < pause <= soft <= resume in
// available memory; resume < soft <= pause in PSI) and holds are >= 0.
absl::Status ValidateWatchdogOptions(const WatchdogOptions& options);

enum class WatchdogState { kRunning, kPaused, kReleased };
const char* WatchdogStateName(WatchdogState state);

enum class WatchdogEvent {
  kShrink,       // soft pressure: micro_batches > 1
  kRestore,      // soft pressure gone: micro_batches back to 1
  kPause,        // RUNNING -> PAUSED
  kResume,       // PAUSED -> RUNNING
  kRelease,      // -> RELEASED
  kStillPaused,  // a long pause, every report_every
};
const char* WatchdogEventName(WatchdogEvent event);

struct WatchdogStep {
  WatchdogState state = WatchdogState::kRunning;
  int micro_batches = 1;
  std::vector<WatchdogEvent> events;  // what this step changed
  std::string reason;                 // why, with the readings, for logs
};

struct WatchdogCounters {
  uint32_t pauses = 0;
  uint32_t shrinks = 0;
  uint32_t releases = 0;
  absl::Duration paused;  // finished pauses plus the current one
};

class Watchdog {
 public:
  // `clock` must outlive the watchdog.
  Watchdog(WatchdogOptions options, Clock& clock);

  WatchdogStep Step(const MemoryReadings& readings);
  // RELEASED -> RUNNING, whole batches, every hold time starting over: the
  // released process was restored intact once memory came back (its
  // supervisor waited for that). No-op in other states.
  void Restored();

  WatchdogState state() const { return state_; }
  int micro_batches() const { return micro_batches_; }
  WatchdogCounters counters() const;
  const WatchdogOptions& options() const { return options_; }

  // The pressure conditions (exposed for tests and logs).
  bool Critical(const MemoryReadings& r) const;
  bool High(const MemoryReadings& r) const;
  bool Soft(const MemoryReadings& r) const;
  bool Calm(const MemoryReadings& r) const;

 private:
  // Tracks since when `condition` has held without a break.
  static bool Held(bool condition, absl::Time now, absl::Duration hold,
                   std::optional<absl::Time>& since);
  // Which levels have held long enough at this step.
  struct Pressure {
    bool critical = false, high = false, soft = false, calm = false;
  };
  // Step's transitions out of the running and the paused state.
  void StepRunning(const Pressure& p, const MemoryReadings& r, absl::Time now,
                   WatchdogStep& step);
  void StepPaused(const Pressure& p, const MemoryReadings& r, absl::Time now,
                  WatchdogStep& step);
  void Release(const std::string& why, const MemoryReadings& r, absl::Time now,
               WatchdogStep& step);

  const WatchdogOptions options_;
  Clock& clock_;
  WatchdogState state_ = WatchdogState::kRunning;
  int micro_batches_ = 1;
  std::optional<absl::Time> critical_since_, high_since_, soft_since_,
      calm_since_;
  absl::Time paused_at_;
  absl::Time last_report_;
  WatchdogCounters counters_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_WATCHDOG_H_
