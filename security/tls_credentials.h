// gRPC TLS credentials for the server and the boards, from PEM files, with
// every file checked up front so a mistake is a clear error at start rather
// than a handshake that fails later for reasons nobody logs. The files are
// watched (gRPC's FileWatcherCertificateProvider): a renewed certificate or
// key, or a new CA bundle, is picked up for new connections without a
// restart. Replace them atomically (write, then rename).
// Thread-safety: functions without shared state.
#ifndef FEDBERRY_SECURITY_TLS_CREDENTIALS_H_
#define FEDBERRY_SECURITY_TLS_CREDENTIALS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pki/fleet_pki.h"

namespace fedberry::security {

// How often watched certificate files are re-read.
inline constexpr unsigned kCertificateRefreshSeconds = 30;

struct ServerTlsFiles {
  std::string cert;       // --tls_cert: the server's certificate (chain)
  std::string key;        // --tls_key
  std::string client_ca;  // --client_ca: non-empty turns on mutual TLS
};

struct ClientTlsFiles {
  std::string ca;    // --tls_ca: the CA bundle that signs the server
  std::string cert;  // --tls_cert: this board's certificate; empty: none
  std::string key;   // --tls_key
  // --tls_server_name: the name the server's certificate must list, when
  // the board dials an address it does not list (e.g. an IP). Empty: the
  // host part of the dialled address.
  std::string server_name;
};

// Reads a PEM file named by `flag`; NotFound or InvalidArgument naming both.
absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* flag);

// Checks a certificate and key pair as of `now`: both readable, the key
// belongs to the certificate, and the certificate is valid (a board's clock
// that is far off shows here too). With `ca_pem`, also that the CA signs it.
// Returns the certificate's facts; the error names the files and the fix.
absl::StatusOr<pki::CertificateFacts> CheckKeyPair(
    const std::string& cert_path, const std::string& key_path, absl::Time now,
    const std::string& ca_pem = "");

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files, absl::Time now);

// Channel credentials and the channel arguments they need (the server name
// override). The board's own certificate is checked as by CheckKeyPair.
struct ClientCredentials {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments arguments;
  pki::CertificateFacts board;  // empty without a board certificate
};
absl::StatusOr<ClientCredentials> MakeClientCredentials(
    const ClientTlsFiles& files, grpc::ChannelArguments arguments,
    absl::Time now);

// True for an address on this machine only: 127.0.0.0/8, [::1], localhost
// (host:port, the forms --listen and --server take).
bool IsLoopbackAddress(const std::string& address);

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_TLS_CREDENTIALS_H_
