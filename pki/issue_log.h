// The issue log of a fleet folder (issued.tsv): one line per certificate the
// fleet CA signed, so `fedberry-pki revoke NAME` can find NAME's serials and
// `fedberry-pki list` can show the fleet without opening every .crt. Plain
// tab-separated text an operator can read, grep and back up:
//
//   # comment lines and blank lines are ignored
//   board-1<TAB>board<TAB>serial<TAB>sha256<TAB>2027-01-01T00:00:00Z<TAB>-
//
// Columns: name, role ("server" or "board"), serial (lowercase hex as
// CertificateFacts::serial_hex), SHA-256 fingerprint, not_after (RFC 3339,
// UTC), revoked_at (RFC 3339, or "-" while not revoked).
// Parsing and formatting are pure; ReadIssueLog/WriteIssueLog add the file.
// Thread-safety: pure functions; the file functions are safe to call from
// several threads, but concurrent writers of one file need outside locking.
#ifndef FEDBERRY_PKI_ISSUE_LOG_H_
#define FEDBERRY_PKI_ISSUE_LOG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "pki/fleet_pki.h"

namespace fedberry::pki {

struct IssueRecord {
  std::string name;
  Role role = Role::kBoard;
  std::string serial_hex;
  std::string sha256_fingerprint;
  absl::Time not_after;
  std::optional<absl::Time> revoked_at;  // nullopt while not revoked
};

// The log's text: a comment line naming the columns, then one line per
// record in the given order. Times are written to the second.
std::string FormatIssueLog(const std::vector<IssueRecord>& records);

// Records in file order. DataLoss naming the line and what is wrong with it
// (column count, name, role, serial, fingerprint, time).
absl::StatusOr<std::vector<IssueRecord>> ParseIssueLog(absl::string_view text);

// ParseIssueLog of the file at `path`; NotFound when it is missing, DataLoss
// naming the file otherwise.
absl::StatusOr<std::vector<IssueRecord>> ReadIssueLog(const std::string& path);

// Replaces the file at `path` atomically (base::WriteFileAtomically), mode
// exactly 0644.
absl::Status WriteIssueLog(const std::string& path,
                           const std::vector<IssueRecord>& records);

}  // namespace fedberry::pki

#endif  // FEDBERRY_PKI_ISSUE_LOG_H_
