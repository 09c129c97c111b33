// The boards a fleet no longer trusts, read from --revoked=FILE: a CRL (PEM
// or DER, as `fedberry-pki revoke` or `openssl ca -gencrl` writes it, and
// checked against the client CA's signature) or a text list of board names
// and certificate SHA-256 fingerprints, one per line ('#' starts a comment).
// Re-read when the file changes (Refresh) or when asked (Reload, on SIGHUP),
// so revoking a board needs no restart. A file that no longer parses keeps
// the list read before, and the error is logged: an operator's typo never
// opens the door to revoked boards.
// Thread-safety: thread-safe.
#ifndef FEDBERRY_SECURITY_REVOCATION_LIST_H_
#define FEDBERRY_SECURITY_REVOCATION_LIST_H_

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/clock.h"
#include "security/peer_identity.h"

namespace fedberry::security {

class RevocationList {
 public:
  // Reads `path`; a CRL is verified with `client_ca_pem` (the CA bundle of
  // --client_ca). NotFound, InvalidArgument or DataLoss naming the file.
  // A CRL past its next update on `clock` is warned about.
  static absl::StatusOr<std::unique_ptr<RevocationList>> Open(
      std::string path, std::string client_ca_pem,
      Clock& clock = Clock::Real());

  // Why `peer` is revoked ("serial 1f.. is in the CRL revoked.crl"), or
  // nullopt when it is not.
  std::optional<std::string> Revokes(const PeerIdentity& peer) const;

  // Re-reads the file now. On error the previous list stays in force.
  absl::Status Reload();
  // Re-reads the file when its size, time or inode changed since the last
  // read. Returns true when it re-read it (successfully or not).
  bool Refresh();

  const std::string& path() const { return path_; }
  // Entries in force (serials, names and fingerprints together).
  size_t size() const;

 private:
  struct Entries {
    std::set<std::string> serials;       // CRL
    std::set<std::string> names;         // text list
    std::set<std::string> fingerprints;  // text list, lowercase, no colons
    bool from_crl = false;
  };
  RevocationList(std::string path, std::string client_ca_pem, Clock& clock)
      : path_(std::move(path)),
        client_ca_pem_(std::move(client_ca_pem)),
        clock_(clock) {}
  absl::StatusOr<Entries> Read(struct stat* seen) const;

  const std::string path_;
  const std::string client_ca_pem_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  Entries entries_ ABSL_GUARDED_BY(mu_);
  struct stat seen_ ABSL_GUARDED_BY(mu_) = {};
};

// Parses the text form; InvalidArgument naming the line of a bad entry.
absl::Status ParseRevokedNames(const std::string& text,
                               std::set<std::string>* names,
                               std::set<std::string>* fingerprints);

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_REVOCATION_LIST_H_
