// Board-side eligibility: whether this board should sit rounds out now, and
// the readings behind it, as the BoardCondition sent with every task poll.
// A board declines with too little data, a hot SoC, firmware throttling or
// under-voltage (which corrupts SD cards), memory pressure within a
// cool-down, or outside its training window; the server skips it and shows
// the reason on the fleet page. Sensor files are read through a ProcFiles
// (sysfs reads like /proc) and time through a Clock, so tests script both.
// A file that does not exist (x86, no firmware) gives no reading and no
// decline; a malformed one gives no reading and one warning.
// Thread-safety: thread-safe.
#ifndef FEDBERRY_CLIENT_ELIGIBILITY_H_
#define FEDBERRY_CLIENT_ELIGIBILITY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/eligibility_options.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/proc_files.h"

namespace fedberry::client {

// Firmware throttled flags that decline a board: now, not since boot.
inline constexpr uint32_t kUnderVoltageNow = 1u << 0;
inline constexpr uint32_t kThrottledNow = 1u << 2;

// The firmware's throttled flags: hex as the sysfs file writes them
// ("50005", with or without "0x"), or vcgencmd's "throttled=0x50005".
// InvalidArgument naming the text otherwise.
absl::StatusOr<uint32_t> ParseThrottledFlags(absl::string_view text);

// A thermal zone's temperature in degrees C from the kernel's millidegrees
// ("45277\n" -> 45.277). InvalidArgument naming the text otherwise.
absl::StatusOr<double> ParseMillidegrees(absl::string_view text);

// What the board knows of itself beyond its files.
struct EligibilitySources {
  // Training samples this board holds (empty: --min_samples is not checked).
  std::function<uint64_t()> samples;
  // When the memory watchdog last held training paused (now while paused);
  // nullopt: never. Empty: no watchdog, memory_pressure stays absent.
  std::function<std::optional<absl::Time>()> last_pause;
};

class Eligibility {
 public:
  // `files` and `clock` must outlive this.
  Eligibility(EligibilityOptions options, runtime::ProcFiles& files,
              Clock& clock, EligibilitySources sources);

  // Takes the readings and sets `declined` to the first rule that applies.
  v1::BoardCondition Check();

  // One line for the start-up log: which rules are on.
  std::string Describe() const;

 private:
  // `path` parsed by `parse`. nullopt when the file does not exist (no
  // such sensor here), or cannot be read or parsed (warned once).
  template <typename T>
  std::optional<T> ReadSensor(const std::string& path,
                              absl::StatusOr<T> (*parse)(absl::string_view));
  // Logs `what` once per `path`.
  void WarnOnce(const std::string& path, const std::string& what);
  // The first rule `c` (and the time since the last pause) breaks; empty:
  // none.
  std::string DeclineReason(const v1::BoardCondition& c,
                            std::optional<absl::Duration> pause_ago);

  const EligibilityOptions options_;
  runtime::ProcFiles& files_;
  Clock& clock_;
  const EligibilitySources sources_;
  absl::Mutex mu_;
  std::set<std::string> warned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_ELIGIBILITY_H_
