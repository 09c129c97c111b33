#include "client/release_mode.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"

namespace fedberry::client {

const char* ReleaseModeName(ReleaseMode mode) {
  switch (mode) {
    case ReleaseMode::kExit:
      return "release: checkpoint and exit";
    case ReleaseMode::kCriu:
      return "release: checkpoint and CRIU dump";
    case ReleaseMode::kOff:
      return "release off: pause only";
  }
  return "?";
}

absl::StatusOr<ReleaseMode> ChooseReleaseMode(
    const std::string& name, bool can_resume,
    std::optional<pid_t> criu_supervisor) {
  if (name != "exit" && name != "criu" && name != "off") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--watchdog_release='", name, "': expected exit, criu or off"));
  }
  if (name == "off") return ReleaseMode::kOff;
  if (!can_resume) {
    spdlog::warn(
        "watchdog: no --checkpoint_dir, so a release would lose the round's "
        "training; the watchdog pauses but never releases memory");
    return ReleaseMode::kOff;
  }
  if (name == "exit") return ReleaseMode::kExit;
  if (!criu_supervisor) {
    spdlog::warn(
        "watchdog: a CRIU release needs a supervisor that can run criu "
        "(--supervise; its log says whether `criu check` passed); memory "
        "release uses checkpoint-and-exit instead");
    return ReleaseMode::kExit;
  }
  return ReleaseMode::kCriu;
}

}  // namespace fedberry::client
