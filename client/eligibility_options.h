// The rules of board-side eligibility as a board's flags set them (see
// eligibility.h), and the training window's text form. No LibTorch and no
// protos: fedberry-sim builds a board's command line from them.
// Thread-safety: plain values and pure functions.
#ifndef FEDBERRY_CLIENT_ELIGIBILITY_OPTIONS_H_
#define FEDBERRY_CLIENT_ELIGIBILITY_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fedberry::client {

inline constexpr char kDefaultThermalFile[] =
    "/sys/class/thermal/thermal_zone0/temp";
// The Raspberry Pi firmware driver's copy of `vcgencmd get_throttled`
// (drivers/firmware/raspberrypi.c), hex without "0x".
inline constexpr char kDefaultThrottledFile[] =
    "/sys/devices/platform/soc/soc:firmware/get_throttled";

// Local hours a board trains in, "22:00-06:00"; may wrap midnight.
struct TrainWindow {
  int start_minute = 0;  // minutes after midnight, [0, 1440)
  int end_minute = 0;    // (0, 1440]; 1440 is "24:00"
  // True when `minute_of_day` (0..1439) is inside [start, end).
  bool Contains(int minute_of_day) const;
  std::string ToString() const;  // "22:00-06:00"
};

// "HH:MM-HH:MM" (hours 0-23, "24:00" as an end); empty: no window (always).
// InvalidArgument naming the text when malformed or empty (start == end).
absl::StatusOr<std::optional<TrainWindow>> ParseTrainWindow(
    absl::string_view text);

struct EligibilityOptions {
  uint64_t min_samples = 0;     // 0: off
  double max_temperature = 70;  // degrees C; 0: off
  std::string thermal_file = kDefaultThermalFile;
  std::string throttled_file = kDefaultThrottledFile;
  bool decline_throttled = true;
  absl::Duration pressure_cooldown = absl::Minutes(5);  // 0: off
  std::optional<TrainWindow> train_window;              // none: always
  absl::TimeZone time_zone = absl::LocalTimeZone();     // of the window
};

// InvalidArgument naming the flag when a limit is negative or not a number.
absl::Status ValidateEligibilityOptions(const EligibilityOptions& options);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_ELIGIBILITY_OPTIONS_H_
