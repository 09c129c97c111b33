// Which callers may join as a site gateway (--site_gateways): a join that
// declares boards (JoinRequest.boards > 0) forwards its boards' sum, which
// the root weighs, and under differential privacy adds as that many
// clipped updates. A board that declared itself a gateway of 1,000 boards
// moved a round by 0.0493 along its own direction where two honest boards
// could move it 1e-4. Only the names listed may, each with at most the
// boards listed for it. Under mutual TLS a name is the certificate's (the
// join is refused unless the certificate lists it), so the list names
// certificates; without it, names are the operator's word.
// Thread-safety: immutable after construction, thread-safe.
#ifndef FEDBERRY_SERVER_FLEET_SITE_GATEWAYS_H_
#define FEDBERRY_SERVER_FLEET_SITE_GATEWAYS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fedberry::server {

class SiteGateways {
 public:
  SiteGateways() = default;  // none: every join is a board's

  // `list`: comma-separated `name` or `name:max_boards` (e.g.
  // "shed-gw,barn-gw:50"); empty: no site gateways. InvalidArgument naming
  // the entry that is not a name or a count.
  static absl::StatusOr<SiteGateways> Parse(const std::string& list);

  // OK for a board (`boards` 0), or a listed gateway within its count.
  // PermissionDenied naming the flag when `name` is not listed;
  // InvalidArgument when it declares more boards than listed.
  absl::Status Admit(const std::string& name, uint32_t boards) const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::map<std::string, uint32_t> max_boards_;  // 0: no count given
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FLEET_SITE_GATEWAYS_H_
