// How the watchdog releases memory when pressure persists, as chosen by
// --watchdog_release and settled against what works on this board:
//   exit  checkpoint, then exit with kMemoryReleaseExitCode for a supervisor
//         (--supervise, or systemd) to restart once memory is back;
//   criu  checkpoint, then a CRIU dump by the supervisor
//         (`--supervise`), which detects CRIU at run time (`criu check`)
//         and says so in one line where it cannot work; without such a
//         supervisor the client says so in one line and uses exit;
//   off   pause only, never release.
// Any release needs a checkpoint to come back to: without a checkpoint
// folder it is off, said in one line.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_RELEASE_MODE_H_
#define FEDBERRY_CLIENT_RELEASE_MODE_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace fedberry::client {

enum class ReleaseMode { kExit, kCriu, kOff };
const char* ReleaseModeName(ReleaseMode mode);

// `criu_supervisor`: the pid of a supervisor that found CRIU usable
// (client/criu_signals.h). InvalidArgument for a name other than exit, criu
// or off.
absl::StatusOr<ReleaseMode> ChooseReleaseMode(
    const std::string& name, bool can_resume,
    std::optional<pid_t> criu_supervisor);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_RELEASE_MODE_H_
