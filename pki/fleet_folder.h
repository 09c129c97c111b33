// The folder the fedberry-pki tool keeps for a fleet: the CA (fleet-ca.crt,
// fleet-ca.key), the CRL (revoked.crl), the issue log (issued.tsv, see
// pki/issue_log.h) and one NAME.crt/NAME.key pair per server or board. Each
// operation reads what it needs, signs with pki/fleet_pki.h and replaces the
// files atomically (base::WriteFileAtomically) with exact modes whatever
// the umask; keys are mode 0600.
//
// Write order makes a crash harmless: the issue log is written before a new
// certificate (a logged certificate nobody holds can still be revoked), the
// CRL before the log marks a revocation, and the CA key last on init (so a
// half-done init is redone without --force).
//
// Thread-safety: each operation holds an exclusive flock(2) on the folder
// for its duration, so concurrent operations (threads or processes, e.g. a
// shell loop run in parallel) on one folder serialise instead of losing
// issue-log lines. The object itself holds no mutable state.
#ifndef FEDBERRY_PKI_FLEET_FOLDER_H_
#define FEDBERRY_PKI_FLEET_FOLDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "pki/fleet_pki.h"
#include "pki/issue_log.h"

namespace fedberry::pki {

inline constexpr char kCaCertFile[] = "fleet-ca.crt";
inline constexpr char kCaKeyFile[] = "fleet-ca.key";
inline constexpr char kCrlFile[] = "revoked.crl";
inline constexpr char kIssueLogFile[] = "issued.tsv";
// Reserved: NAME.crt/NAME.key of this name would overwrite the CA.
inline constexpr char kCaFileStem[] = "fleet-ca";

// New certificates start this long before `now`: a board without a
// real-time clock (a Raspberry Pi) may run a little behind after boot.
inline constexpr absl::Duration kBackdate = absl::Hours(1);

struct RevokeResult {
  std::vector<IssueRecord> newly_revoked;  // revoked_at == now
  int already_revoked = 0;                 // NAME's earlier revocations
  uint64_t crl_number = 0;                 // of the re-signed CRL
};

class FleetFolder {
 public:
  explicit FleetFolder(std::string dir);

  const std::string& dir() const { return dir_; }
  // `file` inside the folder (just `file` when the folder is ".").
  std::string PathOf(absl::string_view file) const;

  // Creates the folder if needed and a new fleet CA in it, valid from
  // now - kBackdate to now + `validity`, an empty CRL (number 1, next update
  // now + `crl_validity`) and an empty issue log. AlreadyExists when
  // fleet-ca.key exists and `force` is false; InvalidArgument for a bad CA
  // name or validity; file errors as base::WriteFileAtomically's.
  absl::StatusOr<CertificateFacts> Init(const std::string& ca_name,
                                        absl::Duration validity,
                                        absl::Duration crl_validity, bool force,
                                        absl::Time now);

  // Issues NAME.crt and NAME.key (0600) for a server or a board, valid from
  // now - kBackdate to now + `validity` but never past the CA's own expiry,
  // and logs it. `sans` as for IssueCertificate (empty: DNS:NAME).
  // InvalidArgument for a bad name (or "fleet-ca"), SAN or validity;
  // FailedPrecondition when the folder has no CA; AlreadyExists when
  // NAME.key exists and `force` is false; DataLoss for a corrupt issue log.
  absl::StatusOr<IssueRecord> Issue(Role role, const std::string& name,
                                    const std::vector<std::string>& sans,
                                    absl::Duration validity, bool force,
                                    absl::Time now);

  // Revokes every certificate logged for `name` that is not revoked yet,
  // re-signs revoked.crl (number + 1, next update now + `crl_validity`)
  // with every revoked serial in the log and marks them in the log. Re-signs
  // even when all were revoked already (which completes a revocation a crash
  // interrupted). NotFound when nothing was ever issued to `name`;
  // FailedPrecondition without a CA; DataLoss for a corrupt log or CRL.
  absl::StatusOr<RevokeResult> Revoke(const std::string& name,
                                      absl::Duration crl_validity,
                                      absl::Time now);

  // Re-signs revoked.crl from the log with a fresh next update (number + 1):
  // what to run before the CRL's next update passes. Returns the new number.
  absl::StatusOr<uint64_t> RefreshCrl(absl::Duration crl_validity,
                                      absl::Time now);

  // The issue log, in issue order. NotFound when the folder has none.
  absl::StatusOr<std::vector<IssueRecord>> List() const;

  // The folder's CRL, checked against its CA.
  absl::StatusOr<CrlFacts> ReadCrlFacts() const;

 private:
  std::string dir_;
};

}  // namespace fedberry::pki

#endif  // FEDBERRY_PKI_FLEET_FOLDER_H_
