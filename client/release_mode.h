// How the watchdog releases memory when pressure persists, as chosen by
// --watchdog_release and settled against what works on this board:
//   exit  checkpoint, then exit with kMemoryReleaseExitCode for a supervisor
//         (--supervise, or systemd) to restart once memory is back;
//   criu  CRIU is detected at run time (`criu check`); where it cannot work
//         the client says so in one line and uses exit;
//   off   pause only, never release.
// Any release needs a checkpoint to come back to: without a checkpoint
// folder it is off, said in one line.
// Thread-safety: pure functions, apart from running `criu check`.
#ifndef FEDBERRY_CLIENT_RELEASE_MODE_H_
#define FEDBERRY_CLIENT_RELEASE_MODE_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/criu_adapter.h"

namespace fedberry::client {

enum class ReleaseMode { kExit, kCriu, kOff };
const char* ReleaseModeName(ReleaseMode mode);

// InvalidArgument for a name other than exit, criu or off.
absl::StatusOr<ReleaseMode> ChooseReleaseMode(
    const std::string& name, bool can_resume, const std::string& criu_dir,
    CommandRunner runner = RealCommandRunner());

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_RELEASE_MODE_H_
