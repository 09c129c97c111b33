// The process's open-file limit (RLIMIT_NOFILE). A gateway holds one
// connection per board, so the common soft limit of 1,024 is a wall long
// before memory or CPU: past it gRPC cannot accept, boards time out, and
// nothing says why. The server raises its soft limit to the hard one at
// start, and FdUsageWatch says when the open descriptors near the limit.
// Thread-safety: FdLimitSystem::Real() is thread-safe; an FdUsageWatch is
// used from one thread.
#ifndef FEDBERRY_RUNTIME_FD_LIMIT_H_
#define FEDBERRY_RUNTIME_FD_LIMIT_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "absl/status/statusor.h"

namespace fedberry::runtime {

// No limit (RLIM_INFINITY).
inline constexpr uint64_t kNoFdLimit = std::numeric_limits<uint64_t>::max();

struct FdLimits {
  uint64_t soft = 0;
  uint64_t hard = 0;
};

// "1024", or "unlimited".
std::string FdLimitText(uint64_t limit);

// The calls behind the limits (getrlimit, setrlimit, /proc/self/fd), so
// tests can give any limits and any count.
class FdLimitSystem {
 public:
  virtual ~FdLimitSystem() = default;
  virtual absl::StatusOr<FdLimits> Get() = 0;
  virtual absl::Status SetSoft(uint64_t soft) = 0;
  // Descriptors open now.
  virtual absl::StatusOr<uint64_t> CountOpen() = 0;
  static FdLimitSystem& Real();
};

struct FdLimitRaise {
  FdLimits before;
  FdLimits after;
  // One line for the log: what the limits were and are.
  std::string Describe() const;
};

// Raises the soft limit to the hard one (a no-op when they are equal).
// Errors name the call that failed and the limits.
absl::StatusOr<FdLimitRaise> RaiseFdLimit(
    FdLimitSystem& system = FdLimitSystem::Real());

// Checks open descriptors against the soft limit and says so through
// `warn`, once when they pass 90% of it and once when they reach it (new
// connections are refused there), and again only after they dropped below
// 80%.
class FdUsageWatch {
 public:
  FdUsageWatch(FdLimitSystem& system,
               std::function<void(const std::string&)> warn);
  void Check();

 private:
  FdLimitSystem& system_;
  std::function<void(const std::string&)> warn_;
  int said_ = 0;  // 0: nothing, 1: near the limit, 2: at it
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_FD_LIMIT_H_
