// The job's minimum client release (--min_client_version): an older board
// is refused at its join and told to upgrade, instead of failing somewhere
// in a round on what an older client cannot do.
// Thread-safety: immutable after construction, thread-safe.
#ifndef FEDBERRY_SERVER_FLEET_VERSION_GATE_H_
#define FEDBERRY_SERVER_FLEET_VERSION_GATE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fedberry::server {

class VersionGate {
 public:
  VersionGate() = default;  // no minimum: every release joins

  // `minimum` empty: no gate. InvalidArgument, naming it, when it is not a
  // version.
  static absl::StatusOr<VersionGate> Parse(const std::string& minimum);

  // OK when `client_version` is at least the minimum. InvalidArgument when
  // it is not MAJOR.MINOR.PATCH (with an optional suffix), saying what form
  // is expected. Otherwise FailedPrecondition with reason
  // wire::kReasonClientTooOld, saying which release it runs (or that it did
  // not say: a client from before 0.1.0) and which it needs.
  absl::Status Admit(const std::string& client_version) const;

  const std::string& minimum() const { return text_; }

 private:
  std::string text_;
  std::vector<int> minimum_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FLEET_VERSION_GATE_H_
