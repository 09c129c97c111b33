#include "client/eligibility_options.h"

#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace fedberry::client {
namespace {

constexpr int kMinutesPerDay = 24 * 60;

// "H:MM" or "HH:MM" as minutes after midnight; "24:00" only when `end`.
std::optional<int> ParseClockTime(absl::string_view text, bool end) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() != 2 || parts[0].empty() || parts[0].size() > 2 ||
      parts[1].size() != 2) {
    return std::nullopt;
  }
  int hours = 0, minutes = 0;
  for (char ch : absl::StrCat(parts[0], parts[1])) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(ch))) {
      return std::nullopt;
    }
  }
  if (!absl::SimpleAtoi(parts[0], &hours) ||
      !absl::SimpleAtoi(parts[1], &minutes) || minutes > 59) {
    return std::nullopt;
  }
  const int at = hours * 60 + minutes;
  if (at < kMinutesPerDay || (end && at == kMinutesPerDay)) return at;
  return std::nullopt;
}

std::string ClockTime(int minute) {
  return absl::StrFormat("%02d:%02d", minute / 60, minute % 60);
}

}  // namespace

bool TrainWindow::Contains(int minute_of_day) const {
  if (start_minute < end_minute) {
    return minute_of_day >= start_minute && minute_of_day < end_minute;
  }
  return minute_of_day >= start_minute || minute_of_day < end_minute;
}

std::string TrainWindow::ToString() const {
  return absl::StrCat(ClockTime(start_minute), "-", ClockTime(end_minute));
}

absl::StatusOr<std::optional<TrainWindow>> ParseTrainWindow(
    absl::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (trimmed.empty()) return std::nullopt;
  std::vector<absl::string_view> ends = absl::StrSplit(trimmed, '-');
  std::optional<int> start, end;
  if (ends.size() == 2) {
    start = ParseClockTime(ends[0], /*end=*/false);
    end = ParseClockTime(ends[1], /*end=*/true);
  }
  if (!start || !end) {
    return absl::InvalidArgumentError(
        absl::StrCat("training window '", text,
                     "' is not HH:MM-HH:MM in local time, e.g. 22:00-06:00"));
  }
  if (*start == *end % kMinutesPerDay) {
    return absl::InvalidArgumentError(
        absl::StrCat("training window '", text,
                     "' starts where it ends; leave it empty to train at any "
                     "time"));
  }
  return TrainWindow{*start, *end};
}

absl::Status ValidateEligibilityOptions(const EligibilityOptions& options) {
  if (!(options.max_temperature >= 0) ||
      !std::isfinite(options.max_temperature)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_temperature=", options.max_temperature,
                     " must be degrees C >= 0 (0: off)"));
  }
  if (options.pressure_cooldown < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pressure_cooldown=", absl::FormatDuration(options.pressure_cooldown),
        " must be >= 0 (0: off)"));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::client
