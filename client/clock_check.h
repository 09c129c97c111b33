// Boards without a real-time clock. A Raspberry Pi boots with the time of
// its last shutdown (or 1970) and keeps it until NTP answers; before that
// its certificates look not yet valid (or the server's expired), and mutual
// TLS fails with words that say nothing of the clock. So before it dials,
// the client compares its clock with the earliest time it can be: this
// build's date (FedberryBuildTime) and the notBefore of the certificates it
// was given. While the clock is earlier, it says so in words and waits for
// NTP, looking again every few seconds, instead of failing.
//
// The wall clock is what is wrong here, so the wait is measured by the
// sleeps it made (the Clock's SleepFor, monotonic on a real clock), never
// by differences of Now(), which jump when NTP sets the time.
// Thread-safety: pure functions; WaitForPlausibleClock calls `options`'
// callbacks on the caller's thread.
#ifndef FEDBERRY_CLIENT_CLOCK_CHECK_H_
#define FEDBERRY_CLIENT_CLOCK_CHECK_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/file_system.h"

namespace fedberry::client {

// The earliest time the clock can plausibly say, and what sets it.
struct ClockFloor {
  absl::Time at = absl::InfinitePast();
  std::string source;  // e.g. "this build's date", "the notBefore of X"
};

// The latest of `build_time` (named "this build's date") and the notBefore
// of each certificate file in `cert_paths` (empty paths are skipped; so is
// a file that cannot be read or parsed, which the transport then reports
// in its own words). Reads through `fs`.
ClockFloor EarliestPlausibleTime(absl::Time build_time,
                                 const std::vector<std::string>& cert_paths,
                                 base::FileSystem& fs);

// OK when `now` is at or after `floor.at`; otherwise FailedPrecondition in
// words: "the clock is 1970-01-02 00:00:05 UTC; waiting for NTP
// (systemd-timesyncd): it is before <source> (<date>) ...".
absl::Status CheckClock(absl::Time now, const ClockFloor& floor);

struct ClockWaitOptions {
  absl::Duration recheck = absl::Seconds(5);       // how often to look again
  absl::Duration report_every = absl::Minutes(1);  // the words, again
  // How long to wait at most (the sleeps' sum); zero: do not wait, fail at
  // once; InfiniteDuration: wait for as long as it takes.
  absl::Duration max_wait = absl::Minutes(15);
  std::function<bool()> stopped;  // true: stop waiting (a signal); may be null
  std::function<void(const std::string&)> log;  // the words; may be null
};

// Returns OK at once, saying nothing, when the clock is plausible. Else
// logs CheckClock's words, then sleeps `recheck` on `clock` and looks again
// (the words again every `report_every`) until the clock is right (logs the
// new time; OK), `stopped` says so (Cancelled), or more than `max_wait` was
// waited (DeadlineExceeded with the words and how long it waited).
absl::Status WaitForPlausibleClock(Clock& clock, const ClockFloor& floor,
                                   const ClockWaitOptions& options);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLOCK_CHECK_H_
