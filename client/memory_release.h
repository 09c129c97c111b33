// How a memory release travels from the batch boundary where the watchdog
// decides it up to fedberry-client's exit status: a status carrying a
// payload, recognised by IsMemoryRelease, and the distinct exit status a
// supervisor (fedberry-client --supervise, or systemd's
// RestartForceExitStatus=) restarts on once memory is back.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_MEMORY_RELEASE_H_
#define FEDBERRY_CLIENT_MEMORY_RELEASE_H_

#include <string>

#include "absl/status/status.h"

namespace fedberry::client {

// fedberry-client's exit status after checkpointing and releasing its
// memory under persistent pressure (EX_TEMPFAIL: try again later).
inline constexpr int kMemoryReleaseExitCode = 75;

// ResourceExhausted with a payload that marks it as a memory release.
absl::Status MemoryReleaseError(const std::string& why);
bool IsMemoryRelease(const absl::Status& status);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_MEMORY_RELEASE_H_
