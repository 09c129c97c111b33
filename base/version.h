// This build's version (CMake's PROJECT_VERSION, which is also the Debian
// package's), and the comparison a server's --min_client_version gate uses.
// Thread-safety: thread-safe (pure functions).
#ifndef FEDBERRY_BASE_VERSION_H_
#define FEDBERRY_BASE_VERSION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fedberry {

// E.g. "0.1.0".
absl::string_view FedberryVersion();

// When this build's source was made, fixed when CMake configures it:
// SOURCE_DATE_EPOCH when set, else the time of the git commit checked out,
// else the configure time (a tree without git). The same for every build
// of one commit, so builds stay reproducible. No correct clock is earlier:
// the board's clock check (client/clock_check.h) takes it as a floor.
absl::Time FedberryBuildTime();

// The numbers of a dotted version, "1.2.10" -> {1, 2, 10}; a Debian
// revision or local suffix after '-', '+' or '~' is ignored ("0.2.0-1"
// -> {0, 2, 0}). InvalidArgument naming the text for anything else (empty,
// a part that is not a number, more than 4 parts).
absl::StatusOr<std::vector<int>> ParseVersion(absl::string_view text);

// <0, 0, >0 as `a` is older than, the same as, or newer than `b`; missing
// trailing parts count as 0 ("1.2" == "1.2.0").
int CompareVersions(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace fedberry

#endif  // FEDBERRY_BASE_VERSION_H_
