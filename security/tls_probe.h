// Why a TLS connection to the server fails. Under TLS 1.3 the server checks
// a board's certificate after the board finished its side of the
// handshake, so gRPC only tells the board "Socket closed", exactly what a
// network fault says. One plain OpenSSL connection made the way the board's
// channel is (same CA, certificate, key and server name) reads the server's
// alert or the local verification error instead, so the board can say what
// to fix and stop rather than retry forever.
// Thread-safety: a function without shared state.
#ifndef FEDBERRY_SECURITY_TLS_PROBE_H_
#define FEDBERRY_SECURITY_TLS_PROBE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "security/tls_credentials.h"

namespace fedberry::security {

// Connects to `address` (host:port) once. With `tls` (its ca set): a TLS
// handshake as the board's channel makes it, then waits up to `timeout` for
// the server's first bytes. Without: only asks whether the server speaks
// TLS. Returns OK when the server accepts the board's transport (the
// failure lies elsewhere), Unavailable when the server cannot be reached,
// PermissionDenied naming the refusal (the server's alert, a certificate
// that does not verify, a name mismatch, TLS against plaintext or the
// reverse) otherwise.
absl::Status ProbeTransport(const std::string& address,
                            const ClientTlsFiles* tls,
                            absl::Duration timeout = absl::Seconds(5));

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_TLS_PROBE_H_
