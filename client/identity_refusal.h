// Telling "the server will never take this board as it is" apart from a
// network fault. A board refused for who it is (a TLS handshake it cannot
// pass, a revoked or wrongly named certificate: PERMISSION_DENIED or
// UNAUTHENTICATED) stops with kRefusedExitCode and says what to fix,
// instead of retrying forever; network faults keep their backoff.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_IDENTITY_REFUSAL_H_
#define FEDBERRY_CLIENT_IDENTITY_REFUSAL_H_

#include <string>

#include "absl/status/status.h"

namespace fedberry::client {

// sysexits.h's EX_NOPERM: a systemd unit can tell it apart (and, with
// RestartPreventExitStatus=77, leave the board down until it is fixed).
inline constexpr int kRefusedExitCode = 77;

// TLS handshakes failed this many times in a row before the board stops
// (with the backoff, well within a minute): one failure may be a server
// restarting or rotating its certificate.
inline constexpr int kHandshakeFailuresToStop = 3;

// A failed TLS handshake (wrong CA, expired or unknown certificate, name
// mismatch, TLS to a plaintext server or the reverse), as gRPC reports it:
// UNAVAILABLE with the TLS library's words.
bool IsHandshakeFailure(const absl::Status& status);

// The server refused this board for who it is: PERMISSION_DENIED,
// UNAUTHENTICATED, or a handshake failure.
bool IsIdentityRefusal(const absl::Status& status);

// One line for the board's log: what was refused and what to fix.
std::string IdentityAdvice(const absl::Status& status);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_IDENTITY_REFUSAL_H_
