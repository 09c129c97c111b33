// Verifies a board's certificate during the server's TLS handshake and,
// when it refuses one, logs which board it was and why. gRPC's built-in
// verification only logs "certificate verify failed", naming neither; so
// the server asks TLS for a certificate without letting OpenSSL judge it
// (a board without one is still refused by the handshake), and this
// verifier runs OpenSSL's X509_verify_cert against the fleet CA, for
// client authentication, at the time of the handshake. The CA file is read
// at each handshake, so a new fleet CA bundle takes effect without a
// restart. Revocation is checked per call (AccessPolicy), where the board
// can be told why.
// Thread-safety: thread-safe (gRPC calls Verify from its handshake threads).
#ifndef FEDBERRY_SECURITY_BOARD_CERTIFICATE_VERIFIER_H_
#define FEDBERRY_SECURITY_BOARD_CERTIFICATE_VERIFIER_H_

#include <grpcpp/security/tls_certificate_verifier.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry::security {

// OK when `chain_pem` (the board's certificate, then any intermediates)
// verifies against the CA bundle in `client_ca_path` at `now` for client
// authentication; else Unauthenticated naming the certificate and the
// reason, as the server logs it.
absl::Status CheckBoardCertificate(const std::string& chain_pem,
                                   const std::string& client_ca_path,
                                   absl::Time now);

// The verifier for grpc::experimental::TlsServerCredentialsOptions;
// certificates are checked at `clock`'s now.
std::shared_ptr<grpc::experimental::CertificateVerifier>
MakeBoardCertificateVerifier(std::string client_ca_path,
                             Clock& clock = Clock::Real());

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_BOARD_CERTIFICATE_VERIFIER_H_
