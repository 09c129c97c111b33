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

absl::StatusOr<ReleaseMode> ChooseReleaseMode(const std::string& name,
                                              bool can_resume,
                                              const std::string& criu_dir,
                                              CommandRunner runner) {
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
  CriuAdapter criu({"criu", criu_dir, true}, std::move(runner));
  if (absl::Status check = criu.Check(); !check.ok()) {
    spdlog::warn(
        "watchdog: CRIU cannot work here ({}); memory release uses "
        "checkpoint-and-exit instead",
        std::string(check.message()));
    return ReleaseMode::kExit;
  }
  auto tmpfs = OnMemoryFileSystem(criu_dir);
  if (tmpfs.ok() && *tmpfs) {
    spdlog::warn(
        "watchdog: CRIU images folder {} is on tmpfs, where a dump frees "
        "nothing; memory release uses checkpoint-and-exit instead",
        criu_dir);
    return ReleaseMode::kExit;
  }
  // `criu check` passes, but dumping the client from its supervisor is not
  // wired yet: say so rather than pretend.
  spdlog::warn(
      "watchdog: `criu check` passes, but the CRIU release is not wired into "
      "the supervisor yet; memory release uses checkpoint-and-exit");
  return ReleaseMode::kExit;
}

}  // namespace fedberry::client
