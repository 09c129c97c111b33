#include "pki/fleet_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/atomic_write.h"
#include "base/file_system.h"

namespace fedberry::pki {
namespace {

// An exclusive flock(2) on the folder itself (no lock file to leave behind).
class FolderLock {
 public:
  static absl::StatusOr<FolderLock> Acquire(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      std::string msg =
          absl::StrCat("cannot open the folder ", dir, ": ", strerror(err));
      return err == ENOENT ? absl::NotFoundError(msg)
                           : absl::PermissionDeniedError(msg);
    }
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("cannot lock the folder ", dir, ": ", strerror(err)));
    }
    return FolderLock(fd);
  }
  FolderLock(FolderLock&& other) : fd_(std::exchange(other.fd_, -1)) {}
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  FolderLock& operator=(FolderLock&&) = delete;
  ~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  explicit FolderLock(int fd) : fd_(fd) {}
  int fd_;
};

// The folder's files, through the base seam: whole reads, and atomic
// replacement with an exact mode whatever the umask (keys 0600).
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return base::FileSystem::Default().ReadFile(path);
}

absl::Status WriteFile(const std::string& path, absl::string_view text,
                       mode_t mode) {
  return base::WriteFileAtomically(base::FileSystem::Default(), path, text,
                                   base::ExactMode(mode));
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

struct CaFiles {
  std::string cert_pem;
  std::string key_pem;
  CertificateFacts facts;
};

absl::StatusOr<CaFiles> ReadCa(const FleetFolder& folder) {
  CaFiles ca;
  for (auto [file, text] : {std::pair{kCaCertFile, &ca.cert_pem},
                            std::pair{kCaKeyFile, &ca.key_pem}}) {
    absl::StatusOr<std::string> read = ReadFile(folder.PathOf(file));
    if (absl::IsNotFound(read.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no fleet CA in ", folder.dir(), " (", folder.PathOf(file),
          " is missing): run `fedberry-pki init` there first"));
    }
    if (!read.ok()) return read.status();
    *text = *std::move(read);
  }
  absl::StatusOr<CertificateFacts> facts = ReadCertificate(ca.cert_pem);
  if (!facts.ok()) {
    return absl::DataLossError(absl::StrCat(folder.PathOf(kCaCertFile), ": ",
                                            facts.status().message()));
  }
  ca.facts = *std::move(facts);
  return ca;
}

// The log, or an empty one when the file is missing (a folder from before
// the log, or one whose log was removed: new issues start it again).
absl::StatusOr<std::vector<IssueRecord>> ReadLogOrEmpty(
    const FleetFolder& folder) {
  absl::StatusOr<std::vector<IssueRecord>> log =
      ReadIssueLog(folder.PathOf(kIssueLogFile));
  if (absl::IsNotFound(log.status())) return std::vector<IssueRecord>();
  return log;
}

// Signs and writes revoked.crl listing every revoked record of `log`, with
// the number after the current CRL's (1 when there is none).
absl::StatusOr<uint64_t> WriteCrl(const FleetFolder& folder, const CaFiles& ca,
                                  const std::vector<IssueRecord>& log,
                                  absl::Duration crl_validity, absl::Time now) {
  uint64_t number = 1;
  absl::StatusOr<std::string> current = ReadFile(folder.PathOf(kCrlFile));
  if (current.ok()) {
    absl::StatusOr<CrlFacts> facts = ReadCrl(*current, ca.cert_pem);
    if (!facts.ok()) {
      return absl::DataLossError(
          absl::StrCat(folder.PathOf(kCrlFile), ": ", facts.status().message(),
                       " (remove it to start a new CRL)"));
    }
    number = facts->number + 1;
  } else if (!absl::IsNotFound(current.status())) {
    return current.status();
  }
  std::vector<RevokedEntry> revoked;
  for (const IssueRecord& r : log) {
    if (r.revoked_at) revoked.push_back({r.serial_hex, *r.revoked_at});
  }
  absl::StatusOr<std::string> crl =
      MakeCrl(ca.cert_pem, ca.key_pem, revoked, number, now, crl_validity);
  if (!crl.ok()) return crl.status();
  if (absl::Status s = WriteFile(folder.PathOf(kCrlFile), *crl, 0644);
      !s.ok()) {
    return s;
  }
  return number;
}

}  // namespace

FleetFolder::FleetFolder(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) dir_ = ".";
}

std::string FleetFolder::PathOf(absl::string_view file) const {
  // Bare names in the current folder read better in messages.
  if (dir_ == ".") return std::string(file);
  return absl::StrCat(dir_, "/", file);
}

absl::StatusOr<CertificateFacts> FleetFolder::Init(const std::string& ca_name,
                                                   absl::Duration validity,
                                                   absl::Duration crl_validity,
                                                   bool force, absl::Time now) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the folder ", dir_, ": ", ec.message()));
  }
  absl::StatusOr<FolderLock> lock = FolderLock::Acquire(dir_);
  if (!lock.ok()) return lock.status();
  if (!force && Exists(PathOf(kCaKeyFile))) {
    return absl::AlreadyExistsError(absl::StrCat(
        PathOf(kCaKeyFile),
        " exists: this folder already has a fleet CA. --force replaces it, "
        "and every certificate the old CA issued stops verifying"));
  }
  absl::StatusOr<Issued> ca =
      MakeCa(ca_name, {now - kBackdate, now + validity});
  if (!ca.ok()) return ca.status();
  absl::StatusOr<CertificateFacts> facts = ReadCertificate(ca->cert_pem);
  if (!facts.ok()) return facts.status();
  absl::StatusOr<std::string> crl =
      MakeCrl(ca->cert_pem, ca->key_pem, {}, 1, now, crl_validity);
  if (!crl.ok()) return crl.status();
  // The key last: until it exists, init may simply be run again.
  struct File {
    const char* name;
    std::string text;
    mode_t mode;
  };
  const File files[] = {{kIssueLogFile, FormatIssueLog({}), 0644},
                        {kCrlFile, *std::move(crl), 0644},
                        {kCaCertFile, ca->cert_pem, 0644},
                        {kCaKeyFile, ca->key_pem, 0600}};
  for (const File& file : files) {
    if (absl::Status s = WriteFile(PathOf(file.name), file.text, file.mode);
        !s.ok()) {
      return s;
    }
  }
  return facts;
}

absl::StatusOr<IssueRecord> FleetFolder::Issue(
    Role role, const std::string& name, const std::vector<std::string>& sans,
    absl::Duration validity, bool force, absl::Time now) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  if (name == kCaFileStem) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the name '", name, "' is taken by the CA's own files; pick another"));
  }
  absl::StatusOr<FolderLock> lock = FolderLock::Acquire(dir_);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<CaFiles> ca = ReadCa(*this);
  if (!ca.ok()) return ca.status();
  const std::string key_path = PathOf(absl::StrCat(name, ".key"));
  const std::string cert_path = PathOf(absl::StrCat(name, ".crt"));
  if (!force && Exists(key_path)) {
    return absl::AlreadyExistsError(absl::StrCat(
        key_path,
        " exists: --force replaces it (the certificate issued with it stays "
        "valid until revoked)"));
  }
  absl::StatusOr<std::vector<IssueRecord>> log = ReadLogOrEmpty(*this);
  if (!log.ok()) return log.status();

  const absl::Time not_after = std::min(now + validity, ca->facts.not_after);
  absl::StatusOr<Issued> issued =
      IssueCertificate(ca->cert_pem, ca->key_pem, role, name, sans,
                       {now - kBackdate, not_after});
  if (!issued.ok()) return issued.status();
  absl::StatusOr<CertificateFacts> facts = ReadCertificate(issued->cert_pem);
  if (!facts.ok()) return facts.status();

  IssueRecord record;
  record.name = name;
  record.role = role;
  record.serial_hex = facts->serial_hex;
  record.sha256_fingerprint = facts->sha256_fingerprint;
  record.not_after = facts->not_after;
  log->push_back(record);
  if (absl::Status s = WriteIssueLog(PathOf(kIssueLogFile), *log); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile(key_path, issued->key_pem, 0600); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile(cert_path, issued->cert_pem, 0644); !s.ok()) {
    return s;
  }
  return record;
}

absl::StatusOr<RevokeResult> FleetFolder::Revoke(const std::string& name,
                                                 absl::Duration crl_validity,
                                                 absl::Time now) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  absl::StatusOr<FolderLock> lock = FolderLock::Acquire(dir_);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<CaFiles> ca = ReadCa(*this);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<std::vector<IssueRecord>> log = ReadLogOrEmpty(*this);
  if (!log.ok()) return log.status();

  RevokeResult result;
  bool found = false;
  for (IssueRecord& r : *log) {
    if (r.name != name) continue;
    found = true;
    if (r.revoked_at) {
      ++result.already_revoked;
    } else {
      r.revoked_at = now;
      result.newly_revoked.push_back(r);
    }
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no certificate was issued to '",
                                            name, "' in ", dir_,
                                            " (see `fedberry-pki list`)"));
  }
  absl::StatusOr<uint64_t> number =
      WriteCrl(*this, *ca, *log, crl_validity, now);
  if (!number.ok()) return number.status();
  result.crl_number = *number;
  if (absl::Status s = WriteIssueLog(PathOf(kIssueLogFile), *log); !s.ok()) {
    return s;
  }
  return result;
}

absl::StatusOr<uint64_t> FleetFolder::RefreshCrl(absl::Duration crl_validity,
                                                 absl::Time now) {
  absl::StatusOr<FolderLock> lock = FolderLock::Acquire(dir_);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<CaFiles> ca = ReadCa(*this);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<std::vector<IssueRecord>> log = ReadLogOrEmpty(*this);
  if (!log.ok()) return log.status();
  return WriteCrl(*this, *ca, *log, crl_validity, now);
}

absl::StatusOr<std::vector<IssueRecord>> FleetFolder::List() const {
  absl::StatusOr<std::vector<IssueRecord>> log =
      ReadIssueLog(PathOf(kIssueLogFile));
  if (absl::IsNotFound(log.status())) {
    return absl::NotFoundError(
        absl::StrCat("no issue log in ", dir_, " (", PathOf(kIssueLogFile),
                     "): run `fedberry-pki init` there first"));
  }
  return log;
}

absl::StatusOr<CrlFacts> FleetFolder::ReadCrlFacts() const {
  absl::StatusOr<std::string> crl = ReadFile(PathOf(kCrlFile));
  if (!crl.ok()) return crl.status();
  absl::StatusOr<std::string> ca = ReadFile(PathOf(kCaCertFile));
  if (!ca.ok()) return ca.status();
  absl::StatusOr<CrlFacts> facts = ReadCrl(*crl, *ca);
  if (!facts.ok()) {
    return absl::Status(
        facts.status().code(),
        absl::StrCat(PathOf(kCrlFile), ": ", facts.status().message()));
  }
  return facts;
}

}  // namespace fedberry::pki
