#include "security/revocation_list.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/log_text.h"
#include "pki/fleet_pki.h"

namespace fedberry::security {
namespace {

// A PEM CRL has its armour. A DER one is an ASN.1 SEQUENCE (0x30) longer
// than 127 bytes (a signature alone is 70 or more), so its length is in the
// long form: 0x81..0x84. Checking the first byte alone took a text list
// whose first fingerprint starts with '0' (also 0x30) for DER.
bool LooksLikeCrl(const std::string& bytes) {
  if (absl::StrContains(bytes, "-----BEGIN X509 CRL-----")) return true;
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x30) {
    return false;
  }
  const unsigned char length = static_cast<unsigned char>(bytes[1]);
  return length >= 0x81 && length <= 0x84;
}

bool IsFingerprint(absl::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return absl::ascii_isxdigit(c);
         });
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
         a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

absl::Status ParseRevokedNames(const std::string& text,
                               std::set<std::string>* names,
                               std::set<std::string>* fingerprints) {
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::string entry =
        absl::AsciiStrToLower(absl::StrReplaceAll(line, {{":", ""}}));
    if (IsFingerprint(entry)) {
      fingerprints->insert(entry);
      continue;
    }
    const bool name_like =
        line.size() <= 64 && std::all_of(line.begin(), line.end(), [](char c) {
          return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_';
        });
    if (!name_like) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, " ('", base::Printable(line, 80),
                       "') is neither a board name nor a SHA-256 fingerprint"));
    }
    names->insert(std::string(line));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RevocationList>> RevocationList::Open(
    std::string path, std::string client_ca_pem, Clock& clock) {
  auto list = std::unique_ptr<RevocationList>(
      new RevocationList(std::move(path), std::move(client_ca_pem), clock));
  struct stat seen = {};
  auto entries = list->Read(&seen);
  if (!entries.ok()) return entries.status();
  absl::MutexLock lock(&list->mu_);
  list->entries_ = *std::move(entries);
  list->seen_ = seen;
  return list;
}

absl::StatusOr<RevocationList::Entries> RevocationList::Read(
    struct stat* seen) const {
  std::ifstream in(path_, std::ios::binary);
  if (!in || ::stat(path_.c_str(), seen) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the revocation list ", path_));
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string content = bytes.str();
  Entries entries;
  if (LooksLikeCrl(content)) {
    auto crl = pki::ReadCrl(content, client_ca_pem_);
    if (!crl.ok()) {
      return absl::Status(crl.status().code(),
                          absl::StrCat("revocation list ", path_, ": ",
                                       crl.status().message()));
    }
    entries.from_crl = true;
    entries.serials.insert(crl->revoked_serials.begin(),
                           crl->revoked_serials.end());
    // A stale CRL still revokes what it lists (better than none), but the
    // operator should re-sign it before boards revoked since go unnoticed.
    if (crl->next_update < clock_.Now()) {
      spdlog::warn(
          "revocation list {} is past its next update ({}): re-sign it "
          "(fedberry-pki crl) so it stays current; it still applies",
          path_,
          absl::FormatTime("%Y-%m-%d %H:%M UTC", crl->next_update,
                           absl::UTCTimeZone()));
    }
    return entries;
  }
  absl::Status parsed =
      ParseRevokedNames(content, &entries.names, &entries.fingerprints);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("revocation list ", path_, ": ", parsed.message()));
  }
  return entries;
}

std::optional<std::string> RevocationList::Revokes(
    const PeerIdentity& peer) const {
  absl::MutexLock lock(&mu_);
  if (!peer.serial_hex.empty() && entries_.serials.count(peer.serial_hex)) {
    return absl::StrCat("its certificate (serial ", peer.serial_hex,
                        ") is revoked by ", path_);
  }
  if (entries_.fingerprints.count(peer.sha256_fingerprint)) {
    return absl::StrCat("its certificate (SHA-256 ", peer.sha256_fingerprint,
                        ") is revoked by ", path_);
  }
  for (const std::string& name : peer.names) {
    if (entries_.names.count(name)) {
      return absl::StrCat("the name '", name, "' is revoked by ", path_);
    }
  }
  return std::nullopt;
}

absl::Status RevocationList::Reload() {
  struct stat seen = {};
  auto entries = Read(&seen);
  absl::MutexLock lock(&mu_);
  if (!entries.ok()) {
    seen_ = seen;  // do not retry the same broken file every poll
    spdlog::error("{}; the revocations read before stay in force",
                  std::string(entries.status().message()));
    return entries.status();
  }
  const size_t before = entries_.serials.size() + entries_.names.size() +
                        entries_.fingerprints.size();
  entries_ = *std::move(entries);
  seen_ = seen;
  const size_t after = entries_.serials.size() + entries_.names.size() +
                       entries_.fingerprints.size();
  spdlog::info("revocation list {} read: {} revoked {} (was {})", path_, after,
               entries_.from_crl ? "serials" : "names and fingerprints",
               before);
  return absl::OkStatus();
}

bool RevocationList::Refresh() {
  struct stat now = {};
  const bool readable = ::stat(path_.c_str(), &now) == 0;
  {
    absl::MutexLock lock(&mu_);
    if (readable && SameFile(now, seen_)) return false;
    if (!readable && seen_.st_ino == 0) return false;  // reported already
  }
  (void)Reload();
  return true;
}

size_t RevocationList::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.serials.size() + entries_.names.size() +
         entries_.fingerprints.size();
}

}  // namespace fedberry::security
