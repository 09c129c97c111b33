#include "runtime/watchdog.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace fedberry::runtime {
namespace {

double Some10(const MemoryReadings& r) { return r.psi ? r.psi->some.avg10 : 0; }
double Full10(const MemoryReadings& r) {
  return r.psi && r.psi->full ? r.psi->full->avg10 : 0;
}

// True when `r` has at least as much memory available as `level` (or the
// level is unset, or the readings are missing).
bool AtOrAbove(const MemoryLevel& level, const MemoryReadings& r) {
  if (level.fraction) {
    auto f = r.available_fraction();
    if (f && *f < *level.fraction) return false;
  }
  if (level.bytes) {
    auto b = r.available_bytes();
    if (b && *b < *level.bytes) return false;
  }
  return true;
}

}  // namespace

bool MemoryLevel::Below(const MemoryReadings& r) const {
  return set() && !AtOrAbove(*this, r);
}

std::string MemoryLevel::ToString() const {
  std::string s;
  if (fraction) s = absl::StrFormat("%.1f%%", *fraction * 100);
  if (bytes) {
    absl::StrAppend(&s, s.empty() ? "" : " or ",
                    absl::StrFormat("%.0fMiB", *bytes / 1048576.0));
  }
  return s.empty() ? "off" : s;
}

absl::StatusOr<MemoryLevel> ParseMemoryLevel(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  MemoryLevel level;
  if (text.empty() || text == "off") return level;
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad memory level '", text,
        "': expected a share (15% or 0.15) or a size (150MiB, 1GiB, bytes)"));
  };
  if (absl::ConsumeSuffix(&text, "%")) {
    double pct = 0;
    if (!absl::SimpleAtod(text, &pct) || pct < 0 || pct > 100) return bad();
    level.fraction = pct / 100;
    return level;
  }
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) ||
          text[digits] == '.')) {
    ++digits;
  }
  absl::string_view number = text.substr(0, digits);
  std::string unit = absl::AsciiStrToLower(text.substr(digits));
  double v = 0;
  if (!absl::SimpleAtod(number, &v) || v < 0) return bad();
  if (unit.empty() && number.find('.') != absl::string_view::npos) {
    if (v > 1) return bad();
    level.fraction = v;
    return level;
  }
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kib" || unit == "kb") scale = 1024.0;
  if (unit == "m" || unit == "mib" || unit == "mb") scale = 1048576.0;
  if (unit == "g" || unit == "gib" || unit == "gb") scale = 1073741824.0;
  if (scale == 0) return bad();
  level.bytes = static_cast<uint64_t>(v * scale);
  return level;
}

absl::Status ValidateWatchdogOptions(const WatchdogOptions& o) {
  const auto order = [](const MemoryLevel& lower, const MemoryLevel& upper,
                        const char* a, const char* b) -> absl::Status {
    if (lower.fraction && upper.fraction && *lower.fraction > *upper.fraction) {
      return absl::InvalidArgumentError(
          absl::StrCat(a, " (", lower.ToString(), ") must not exceed ", b, " (",
                       upper.ToString(), ")"));
    }
    if (lower.bytes && upper.bytes && *lower.bytes > *upper.bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(a, " (", lower.ToString(), ") must not exceed ", b, " (",
                       upper.ToString(), ")"));
    }
    return absl::OkStatus();
  };
  for (absl::Status s :
       {order(o.critical_available, o.pause_available, "critical level",
              "pause level"),
        order(o.pause_available, o.soft_available, "pause level", "soft level"),
        order(o.pause_available, o.resume_available, "pause level",
              "resume level"),
        order(o.soft_available, o.resume_available, "soft level",
              "resume level")}) {
    if (!s.ok()) return s;
  }
  if (o.resume_psi_some10 > o.soft_psi_some10 ||
      o.soft_psi_some10 > o.pause_psi_some10) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PSI thresholds must be ordered resume (%.1f) <= soft (%.1f) <= "
        "pause (%.1f)",
        o.resume_psi_some10, o.soft_psi_some10, o.pause_psi_some10));
  }
  if (o.soft_hold < absl::ZeroDuration() ||
      o.pause_hold < absl::ZeroDuration() ||
      o.resume_hold < absl::ZeroDuration() ||
      o.critical_hold < absl::ZeroDuration() ||
      o.release_after < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("watchdog hold times must be >= 0");
  }
  if (o.soft_micro_batches < 1) {
    return absl::InvalidArgumentError("soft_micro_batches must be >= 1");
  }
  return absl::OkStatus();
}

const char* WatchdogStateName(WatchdogState state) {
  switch (state) {
    case WatchdogState::kRunning:
      return "running";
    case WatchdogState::kPaused:
      return "paused";
    case WatchdogState::kReleased:
      return "released";
  }
  return "?";
}

const char* WatchdogEventName(WatchdogEvent event) {
  switch (event) {
    case WatchdogEvent::kShrink:
      return "shrink";
    case WatchdogEvent::kRestore:
      return "restore";
    case WatchdogEvent::kPause:
      return "pause";
    case WatchdogEvent::kResume:
      return "resume";
    case WatchdogEvent::kRelease:
      return "release";
    case WatchdogEvent::kStillPaused:
      return "still-paused";
  }
  return "?";
}

Watchdog::Watchdog(WatchdogOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

bool Watchdog::Critical(const MemoryReadings& r) const {
  return options_.critical_available.Below(r) ||
         (options_.critical_psi_full10 > 0 &&
          Full10(r) >= options_.critical_psi_full10);
}

bool Watchdog::High(const MemoryReadings& r) const {
  return options_.pause_available.Below(r) ||
         (options_.pause_psi_some10 > 0 &&
          Some10(r) >= options_.pause_psi_some10) ||
         (options_.pause_rss_bytes && r.rss_bytes &&
          *r.rss_bytes > *options_.pause_rss_bytes);
}

bool Watchdog::Soft(const MemoryReadings& r) const {
  return options_.soft_available.Below(r) ||
         (options_.soft_psi_some10 > 0 &&
          Some10(r) >= options_.soft_psi_some10);
}

bool Watchdog::Calm(const MemoryReadings& r) const {
  return !options_.resume_available.Below(r) &&
         Some10(r) <= options_.resume_psi_some10 && !Critical(r) &&
         !(options_.pause_rss_bytes && r.rss_bytes &&
           *r.rss_bytes > *options_.pause_rss_bytes);
}

bool Watchdog::Held(bool condition, absl::Time now, absl::Duration hold,
                    std::optional<absl::Time>& since) {
  if (!condition) {
    since.reset();
    return false;
  }
  if (!since) since = now;
  return now - *since >= hold;
}

WatchdogCounters Watchdog::counters() const {
  WatchdogCounters c = counters_;
  if (state_ == WatchdogState::kPaused) c.paused += clock_.Now() - paused_at_;
  return c;
}

void Watchdog::Restored() {
  if (state_ != WatchdogState::kReleased) return;
  state_ = WatchdogState::kRunning;
  micro_batches_ = 1;
  critical_since_.reset();
  high_since_.reset();
  soft_since_.reset();
  calm_since_.reset();
}

void Watchdog::Release(const std::string& why, const MemoryReadings& r,
                       absl::Time now, WatchdogStep& step) {
  if (state_ == WatchdogState::kPaused) counters_.paused += now - paused_at_;
  state_ = WatchdogState::kReleased;
  ++counters_.releases;
  step.events.push_back(WatchdogEvent::kRelease);
  step.reason = absl::StrCat(why, ": ", r.Summary());
}

void Watchdog::StepRunning(const Pressure& p, const MemoryReadings& r,
                           absl::Time now, WatchdogStep& step) {
  if (p.critical && options_.release_enabled) {
    Release("critical memory pressure", r, now, step);
    return;
  }
  if (p.high || p.critical) {
    state_ = WatchdogState::kPaused;
    paused_at_ = now;
    last_report_ = now;
    ++counters_.pauses;
    calm_since_.reset();
    step.events.push_back(WatchdogEvent::kPause);
    step.reason = absl::StrCat(
        "memory pressure above the pause level (available < ",
        options_.pause_available.ToString(),
        " or PSI some10 >= ", options_.pause_psi_some10, "%) for ",
        absl::FormatDuration(options_.pause_hold), ": ", r.Summary());
    return;
  }
  if (micro_batches_ == 1 && p.soft && options_.soft_micro_batches > 1) {
    micro_batches_ = options_.soft_micro_batches;
    ++counters_.shrinks;
    step.events.push_back(WatchdogEvent::kShrink);
    step.reason = absl::StrCat("soft memory pressure: ", r.Summary());
  } else if (micro_batches_ > 1 && p.calm) {
    micro_batches_ = 1;
    step.events.push_back(WatchdogEvent::kRestore);
    step.reason = absl::StrCat("memory pressure gone: ", r.Summary());
  }
}

void Watchdog::StepPaused(const Pressure& p, const MemoryReadings& r,
                          absl::Time now, WatchdogStep& step) {
  if (p.critical && options_.release_enabled) {
    Release("critical memory pressure while paused", r, now, step);
    return;
  }
  const std::string paused_for =
      absl::FormatDuration(absl::Trunc(now - paused_at_, absl::Seconds(1)));
  if (p.calm) {
    state_ = WatchdogState::kRunning;
    counters_.paused += now - paused_at_;
    calm_since_.reset();
    step.events.push_back(WatchdogEvent::kResume);
    step.reason =
        absl::StrCat("memory pressure below the resume level (available >= ",
                     options_.resume_available.ToString(),
                     ", PSI some10 <= ", options_.resume_psi_some10, "%) for ",
                     absl::FormatDuration(options_.resume_hold), " after ",
                     paused_for, " paused: ", r.Summary());
    return;
  }
  if (options_.release_enabled && now - paused_at_ >= options_.release_after) {
    Release(
        absl::StrCat("memory pressure persisted for ",
                     absl::FormatDuration(now - paused_at_), " while paused"),
        r, now, step);
    return;
  }
  if (now - last_report_ >= options_.report_every) {
    last_report_ = now;
    step.events.push_back(WatchdogEvent::kStillPaused);
    step.reason = absl::StrCat(
        "still paused after ", paused_for,
        ", waiting for available >= ", options_.resume_available.ToString(),
        " and PSI some10 <= ", options_.resume_psi_some10, "% for ",
        absl::FormatDuration(options_.resume_hold), ": ", r.Summary());
  }
}

WatchdogStep Watchdog::Step(const MemoryReadings& r) {
  const absl::Time now = clock_.Now();
  Pressure p;
  p.critical = Held(Critical(r), now, options_.critical_hold, critical_since_);
  p.high = Held(High(r), now, options_.pause_hold, high_since_);
  p.soft = Held(Soft(r), now, options_.soft_hold, soft_since_);
  p.calm = Held(Calm(r), now, options_.resume_hold, calm_since_);
  WatchdogStep step;
  if (state_ == WatchdogState::kRunning) {
    StepRunning(p, r, now, step);
  } else if (state_ == WatchdogState::kPaused) {
    StepPaused(p, r, now, step);
  }
  step.state = state_;
  step.micro_batches = micro_batches_;
  return step;
}

}  // namespace fedberry::runtime
