#include "sim/local_pki.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pki/fleet_pki.h"

namespace fedberry::sim {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& text,
                       mode_t mode) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  // open() honours the umask and keeps an existing file's mode.
  const bool ok =
      ::fchmod(fd, mode) == 0 && ::write(fd, text.data(), text.size()) ==
                                     static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LocalPki> MakeLocalPki(
    const std::string& dir, const std::vector<std::string>& board_names) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  const absl::Time now = absl::Now();
  // A little in the past: a board whose clock lags still accepts them.
  const pki::Validity validity{now - absl::Hours(1), now + absl::Hours(24)};
  auto ca = pki::MakeCa("fedberry-sim fleet CA", validity);
  if (!ca.ok()) return ca.status();
  LocalPki out;
  out.ca_cert = dir + "/fleet-ca.crt";
  if (absl::Status s = WriteFile(out.ca_cert, ca->cert_pem, 0644); !s.ok()) {
    return s;
  }
  auto issue = [&](pki::Role role, const std::string& name,
                   const std::vector<std::string>& sans, std::string* cert,
                   std::string* key) -> absl::Status {
    auto issued = pki::IssueCertificate(ca->cert_pem, ca->key_pem, role, name,
                                        sans, validity);
    if (!issued.ok()) return issued.status();
    *cert = absl::StrCat(dir, "/", name, ".crt");
    *key = absl::StrCat(dir, "/", name, ".key");
    if (absl::Status s = WriteFile(*cert, issued->cert_pem, 0644); !s.ok()) {
      return s;
    }
    return WriteFile(*key, issued->key_pem, 0600);
  };
  if (absl::Status s = issue(pki::Role::kServer, out.server_name,
                             {"DNS:localhost", "IP:127.0.0.1"},
                             &out.server_cert, &out.server_key);
      !s.ok()) {
    return s;
  }
  for (const std::string& name : board_names) {
    std::string cert, key;
    if (absl::Status s = issue(pki::Role::kBoard, name, {}, &cert, &key);
        !s.ok()) {
      return s;
    }
    out.board_certs.push_back(cert);
    out.board_keys.push_back(key);
  }
  return out;
}

}  // namespace fedberry::sim
