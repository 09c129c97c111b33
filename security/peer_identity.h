// Who is calling: the identity a verified client certificate gives a gRPC
// caller under mutual TLS. A board's identity is its certificate, not the
// names or ids it sends in messages.
// Thread-safety: plain values.
#ifndef FEDBERRY_SECURITY_PEER_IDENTITY_H_
#define FEDBERRY_SECURITY_PEER_IDENTITY_H_

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

namespace fedberry::security {

struct PeerIdentity {
  // A client certificate verified by the handshake (mutual TLS only).
  bool authenticated = false;
  // The certificate's name: its CN, or its first DNS name without one.
  std::string name;
  // Every name the certificate lists: CN and DNS subjectAltNames.
  std::vector<std::string> names;
  std::string serial_hex;          // lowercase hex
  std::string sha256_fingerprint;  // lowercase hex of the DER certificate
  std::string address;             // e.g. "ipv4:10.0.0.7:51234", for logs
  std::string certificate_pem;     // the verified certificate, as sent

  // True when the certificate lists `board_name` (CN or DNS name).
  bool Names(const std::string& board_name) const;
  // For logs: "'board-3' (ipv4:10.0.0.7:51234)", or the address alone.
  std::string Describe() const;
  // Who is behind the call, for sharing what one party may hold: its
  // certificate ("cert:<fingerprint>") under mutual TLS, else its host
  // ("host:ipv4:10.0.0.7", the address without its port).
  std::string Owner() const;
};

// The caller of `context`; authenticated only when the transport is TLS and
// the peer presented a certificate the handshake verified.
PeerIdentity IdentityOf(const grpc::ServerContextBase& context);

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_PEER_IDENTITY_H_
