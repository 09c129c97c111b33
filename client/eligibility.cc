#include "client/eligibility.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/civil_time.h"

namespace fedberry::client {
namespace {

std::string WholeSeconds(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

}  // namespace

absl::StatusOr<uint32_t> ParseThrottledFlags(absl::string_view text) {
  absl::string_view hex = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&hex, "throttled=");
  if (!absl::ConsumePrefix(&hex, "0x")) absl::ConsumePrefix(&hex, "0X");
  uint32_t flags = 0;
  if (hex.empty() || hex.size() > 8 || !absl::SimpleHexAtoi(hex, &flags) ||
      !absl::c_all_of(hex, [](char ch) {
        return absl::ascii_isxdigit(static_cast<unsigned char>(ch));
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("throttled flags '", absl::CEscape(text),
                     "' are not a hex number like 0x50005"));
  }
  return flags;
}

absl::StatusOr<double> ParseMillidegrees(absl::string_view text) {
  int64_t millidegrees = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &millidegrees)) {
    return absl::InvalidArgumentError(
        absl::StrCat("temperature '", absl::CEscape(text),
                     "' is not a whole number of millidegrees C"));
  }
  return static_cast<double>(millidegrees) / 1000.0;
}

Eligibility::Eligibility(EligibilityOptions options, runtime::ProcFiles& files,
                         Clock& clock, EligibilitySources sources)
    : options_(std::move(options)),
      files_(files),
      clock_(clock),
      sources_(std::move(sources)) {}

void Eligibility::WarnOnce(const std::string& path, const std::string& what) {
  {
    absl::MutexLock lock(&mu_);
    if (!warned_.insert(path).second) return;
  }
  spdlog::warn("eligibility: no reading from {}: {}", path, what);
}

template <typename T>
std::optional<T> Eligibility::ReadSensor(
    const std::string& path, absl::StatusOr<T> (*parse)(absl::string_view)) {
  if (path.empty()) return std::nullopt;
  absl::StatusOr<std::string> text = files_.Read(path);
  if (absl::IsNotFound(text.status())) return std::nullopt;  // none here
  absl::StatusOr<T> reading = text.ok() ? parse(*text) : text.status();
  if (!reading.ok()) {
    WarnOnce(path, std::string(reading.status().message()));
    return std::nullopt;
  }
  return *reading;
}

std::string Eligibility::DeclineReason(
    const v1::BoardCondition& c, std::optional<absl::Duration> pause_ago) {
  if (options_.min_samples > 0 && sources_.samples) {
    if (const uint64_t n = sources_.samples(); n < options_.min_samples) {
      return absl::StrCat(
          n, " samples, fewer than --min_samples=", options_.min_samples);
    }
  }
  if (options_.max_temperature > 0 && c.has_soc_celsius() &&
      c.soc_celsius() > options_.max_temperature) {
    return absl::StrFormat("SoC at %.1f C, over the %g C limit",
                           c.soc_celsius(), options_.max_temperature);
  }
  if (options_.decline_throttled && c.has_throttled()) {
    const std::string flags = absl::StrFormat("0x%x", c.throttled());
    if (c.throttled() & kUnderVoltageNow) {
      return absl::StrCat("under-voltage (firmware flags ", flags,
                          "): a weak power supply corrupts SD cards");
    }
    if (c.throttled() & kThrottledNow) {
      return absl::StrCat("throttled by the firmware (flags ", flags, ")");
    }
  }
  if (options_.pressure_cooldown > absl::ZeroDuration() &&
      c.memory_pressure()) {
    return absl::StrCat("memory pressure ",
                        *pause_ago <= absl::ZeroDuration()
                            ? std::string("now")
                            : absl::StrCat(WholeSeconds(*pause_ago), " ago"),
                        " (cool-down ",
                        WholeSeconds(options_.pressure_cooldown), ")");
  }
  if (options_.train_window) {
    const absl::CivilMinute local =
        absl::ToCivilMinute(clock_.Now(), options_.time_zone);
    if (!options_.train_window->Contains(local.hour() * 60 + local.minute())) {
      return absl::StrCat("outside the training window ",
                          options_.train_window->ToString());
    }
  }
  return "";
}

v1::BoardCondition Eligibility::Check() {
  v1::BoardCondition c;
  if (auto celsius = ReadSensor(options_.thermal_file, &ParseMillidegrees)) {
    c.set_soc_celsius(*celsius);
  }
  if (auto flags = ReadSensor(options_.throttled_file, &ParseThrottledFlags)) {
    c.set_throttled(*flags);
  }
  std::optional<absl::Duration> pause_ago;
  if (sources_.last_pause) {
    if (std::optional<absl::Time> paused = sources_.last_pause()) {
      pause_ago = clock_.Now() - *paused;
    }
    c.set_memory_pressure(pause_ago.has_value() &&
                          *pause_ago <= options_.pressure_cooldown);
  }
  c.set_declined(DeclineReason(c, pause_ago));
  return c;
}

std::string Eligibility::Describe() const {
  std::vector<std::string> rules;
  if (options_.min_samples > 0) {
    rules.push_back(absl::StrCat(">= ", options_.min_samples, " samples"));
  }
  if (options_.max_temperature > 0) {
    rules.push_back(absl::StrFormat(
        "SoC <= %g C (%s)", options_.max_temperature, options_.thermal_file));
  }
  if (options_.decline_throttled) {
    rules.push_back(absl::StrCat("no under-voltage or throttling now (",
                                 options_.throttled_file, ")"));
  }
  if (options_.pressure_cooldown > absl::ZeroDuration()) {
    rules.push_back(absl::StrCat("no memory pressure in the last ",
                                 WholeSeconds(options_.pressure_cooldown)));
  }
  if (options_.train_window) {
    rules.push_back(absl::StrCat("inside ", options_.train_window->ToString(),
                                 " local time"));
  }
  if (rules.empty()) return "eligibility: the board never declines rounds";
  return absl::StrCat("eligibility: the board trains only with ",
                      absl::StrJoin(rules, ", "));
}

}  // namespace fedberry::client
