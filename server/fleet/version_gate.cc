#include "server/fleet/version_gate.h"

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "base/version.h"
#include "proto/wire.h"

namespace fedberry::server {
namespace {

constexpr char kReleaseForm[] =
    "MAJOR.MINOR.PATCH, three numbers of at most 6 digits joined by dots "
    "(e.g. 0.2.0), optionally followed by '-', '+' or '~' and a suffix";

}  // namespace

absl::StatusOr<VersionGate> VersionGate::Parse(const std::string& minimum) {
  VersionGate gate;
  if (minimum.empty()) return gate;
  absl::StatusOr<std::vector<int>> parsed = ParseVersion(minimum);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--min_client_version: ", parsed.status().message()));
  }
  gate.text_ = minimum;
  gate.minimum_ = *std::move(parsed);
  return gate;
}

absl::Status VersionGate::Admit(const std::string& client_version) const {
  if (minimum_.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<int>> version = ParseVersion(client_version);
  // fedberry-client says MAJOR.MINOR.PATCH: anything else is no release
  // to upgrade from.
  if (!client_version.empty() && (!version.ok() || version->size() != 3)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not joined: the client version '", base::Printable(client_version, 64),
        "' is malformed: expected ", kReleaseForm));
  }
  if (version.ok() && CompareVersions(*version, minimum_) >= 0) {
    return absl::OkStatus();
  }
  const std::string runs =
      client_version.empty()
          ? "a release that does not report its version (fedberry-client "
            "sends MAJOR.MINOR.PATCH since 0.1.0)"
          : absl::StrCat("fedberry-client ",
                         base::Printable(client_version, 64));
  return wire::WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "not joined: this board runs ", runs, "; the job needs ", text_,
          " or newer: upgrade fedberry-client on this board (e.g. apt "
          "install --only-upgrade fedberry) and it joins on its next try")),
      wire::kReasonClientTooOld);
}

}  // namespace fedberry::server
