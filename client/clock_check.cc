#include "client/clock_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pki/fleet_pki.h"

namespace fedberry::client {
namespace {

std::string Utc(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

void Say(const ClockWaitOptions& options, const std::string& words) {
  if (options.log) options.log(words);
}

}  // namespace

ClockFloor EarliestPlausibleTime(absl::Time build_time,
                                 const std::vector<std::string>& cert_paths,
                                 base::FileSystem& fs) {
  ClockFloor floor{build_time, "this build's date"};
  for (const std::string& path : cert_paths) {
    if (path.empty()) continue;
    absl::StatusOr<std::string> pem = fs.ReadFile(path);
    if (!pem.ok()) continue;
    absl::StatusOr<pki::CertificateFacts> facts = pki::ReadCertificate(*pem);
    if (!facts.ok() || facts->not_before <= floor.at) continue;
    floor = {facts->not_before, absl::StrCat("the notBefore of ", path)};
  }
  return floor;
}

absl::Status CheckClock(absl::Time now, const ClockFloor& floor) {
  if (now >= floor.at) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the clock is ", Utc(now),
      "; waiting for NTP (systemd-timesyncd): it is before ", floor.source,
      " (", Utc(floor.at),
      "), so it has not been set since the board started (a Raspberry Pi "
      "has no real-time clock), and TLS would find the certificates not "
      "yet valid"));
}

absl::Status WaitForPlausibleClock(Clock& clock, const ClockFloor& floor,
                                   const ClockWaitOptions& options) {
  absl::Status wrong = CheckClock(clock.Now(), floor);
  if (wrong.ok()) return wrong;
  Say(options, std::string(wrong.message()));
  absl::Duration waited = absl::ZeroDuration();
  absl::Duration since_report = absl::ZeroDuration();
  const absl::Duration step = std::max(options.recheck, absl::Milliseconds(1));
  while (true) {
    if (options.stopped && options.stopped()) {
      return absl::CancelledError(
          absl::StrCat("stopped while waiting for the clock to be set (",
                       wrong.message(), ")"));
    }
    if (waited >= options.max_wait) {
      return absl::DeadlineExceededError(
          absl::StrCat(wrong.message(), "; still not set after waiting ",
                       absl::FormatDuration(waited), " (--clock_wait)"));
    }
    clock.SleepFor(step);
    waited += step;
    since_report += step;
    const absl::Time now = clock.Now();
    wrong = CheckClock(now, floor);
    if (wrong.ok()) {
      Say(options, absl::StrCat("the clock is now ", Utc(now), " (set after ",
                                absl::FormatDuration(waited), "); going on"));
      return absl::OkStatus();
    }
    if (since_report >= options.report_every) {
      Say(options, std::string(wrong.message()));
      since_report = absl::ZeroDuration();
    }
  }
}

}  // namespace fedberry::client
