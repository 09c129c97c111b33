// Fresh certificates for a federation on one machine (fedberry-sim --tls):
// a fleet CA, a server certificate for localhost, and one board
// certificate per client, written to a folder with keys at mode 0600.
// Thread-safety: a function without shared state.
#ifndef FEDBERRY_SIM_LOCAL_PKI_H_
#define FEDBERRY_SIM_LOCAL_PKI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/clock.h"

namespace fedberry::sim {

struct LocalPki {
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::vector<std::string> board_certs;  // board_names[i]'s
  std::vector<std::string> board_keys;
  // The name the server's certificate lists (clients pass it as
  // --tls_server_name, so shaped clients may dial a veth address).
  std::string server_name = "localhost";
};

// Writes the files into `dir` (created if missing). Valid for a day from
// `clock`'s now.
absl::StatusOr<LocalPki> MakeLocalPki(
    const std::string& dir, const std::vector<std::string>& board_names,
    Clock& clock = Clock::Real());

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_LOCAL_PKI_H_
