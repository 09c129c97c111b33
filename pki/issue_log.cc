#include "pki/issue_log.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/atomic_write.h"
#include "base/file_system.h"

namespace fedberry::pki {
namespace {

constexpr char kHeader[] =
    "# fedberry-pki issue log: name, role, serial, sha256, not_after, "
    "revoked_at (- while valid)\n";
constexpr absl::string_view kNotRevoked = "-";
constexpr size_t kColumns = 6;

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

bool IsLowerHex(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

absl::Status LineError(int line, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("line ", line, ": ", what));
}

absl::StatusOr<absl::Time> ParseTime(int line, absl::string_view column,
                                     absl::string_view text) {
  absl::Time t;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &error)) {
    return LineError(line, absl::StrCat(column, " '", text,
                                        "' is not an RFC 3339 time: ", error));
  }
  return t;
}

absl::StatusOr<IssueRecord> ParseLine(int line, absl::string_view text) {
  std::vector<absl::string_view> columns = absl::StrSplit(text, '\t');
  if (columns.size() != kColumns) {
    return LineError(
        line, absl::StrCat("expected ", kColumns,
                           " tab-separated columns, found ", columns.size()));
  }
  IssueRecord record;
  record.name = std::string(columns[0]);
  if (absl::Status s = CheckName(record.name); !s.ok()) {
    return LineError(line, s.message());
  }
  if (columns[1] == RoleName(Role::kServer)) {
    record.role = Role::kServer;
  } else if (columns[1] == RoleName(Role::kBoard)) {
    record.role = Role::kBoard;
  } else {
    return LineError(line, absl::StrCat("role '", columns[1],
                                        "' is neither server nor board"));
  }
  if (!IsLowerHex(columns[2])) {
    return LineError(
        line, absl::StrCat("serial '", columns[2], "' is not lowercase hex"));
  }
  record.serial_hex = std::string(columns[2]);
  if (columns[3].size() != 64 || !IsLowerHex(columns[3])) {
    return LineError(line, absl::StrCat("fingerprint '", columns[3],
                                        "' is not 64 lowercase hex digits"));
  }
  record.sha256_fingerprint = std::string(columns[3]);
  absl::StatusOr<absl::Time> not_after =
      ParseTime(line, "not_after", columns[4]);
  if (!not_after.ok()) return not_after.status();
  record.not_after = *not_after;
  if (columns[5] != kNotRevoked) {
    absl::StatusOr<absl::Time> revoked_at =
        ParseTime(line, "revoked_at", columns[5]);
    if (!revoked_at.ok()) return revoked_at.status();
    record.revoked_at = *revoked_at;
  }
  return record;
}

}  // namespace

std::string FormatIssueLog(const std::vector<IssueRecord>& records) {
  std::string out = kHeader;
  for (const IssueRecord& r : records) {
    absl::StrAppend(
        &out, r.name, "\t", RoleName(r.role), "\t", r.serial_hex, "\t",
        r.sha256_fingerprint, "\t", Rfc3339(r.not_after), "\t",
        r.revoked_at ? Rfc3339(*r.revoked_at) : std::string(kNotRevoked), "\n");
  }
  return out;
}

absl::StatusOr<std::vector<IssueRecord>> ParseIssueLog(absl::string_view text) {
  std::vector<IssueRecord> records;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty() || line.front() == '#') {
      continue;
    }
    absl::StatusOr<IssueRecord> record = ParseLine(line_number, line);
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<IssueRecord>> ReadIssueLog(const std::string& path) {
  absl::StatusOr<std::string> text = base::FileSystem::Default().ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<IssueRecord>> records = ParseIssueLog(*text);
  if (!records.ok()) {
    return absl::Status(records.status().code(),
                        absl::StrCat(path, " ", records.status().message()));
  }
  return records;
}

absl::Status WriteIssueLog(const std::string& path,
                           const std::vector<IssueRecord>& records) {
  return base::WriteFileAtomically(base::FileSystem::Default(), path,
                                   FormatIssueLog(records),
                                   base::ExactMode(0644));
}

}  // namespace fedberry::pki
