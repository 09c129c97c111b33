#include "sim/local_pki.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/atomic_write.h"
#include "base/file_system.h"
#include "pki/fleet_pki.h"

namespace fedberry::sim {

absl::StatusOr<LocalPki> MakeLocalPki(
    const std::string& dir, const std::vector<std::string>& board_names,
    Clock& clock) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  const absl::Time now = clock.Now();
  // A little in the past: a board whose clock lags still accepts them.
  const pki::Validity validity{now - absl::Hours(1), now + absl::Hours(24)};
  auto ca = pki::MakeCa("fedberry-sim fleet CA", validity);
  if (!ca.ok()) return ca.status();
  base::FileSystem& fs = base::FileSystem::Default();
  LocalPki out;
  out.ca_cert = dir + "/fleet-ca.crt";
  if (absl::Status s = base::WriteFileAtomically(fs, out.ca_cert, ca->cert_pem,
                                                 base::ExactMode(0644));
      !s.ok()) {
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
    if (absl::Status s = base::WriteFileAtomically(fs, *cert, issued->cert_pem,
                                                   base::ExactMode(0644));
        !s.ok()) {
      return s;
    }
    return base::WriteFileAtomically(fs, *key, issued->key_pem,
                                     base::ExactMode(0600));
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
