// How the server listens and how a board dials: the choice between mutual
// TLS, TLS and plaintext made once from the command line, with the rules
// every deployment gets: plaintext needs --insecure anywhere but loopback,
// a revocation list needs mutual TLS, and each file is checked before use.
// Thread-safety: plain values once made.
#ifndef FEDBERRY_SECURITY_TRANSPORT_H_
#define FEDBERRY_SECURITY_TRANSPORT_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "security/access_policy.h"
#include "security/revocation_list.h"
#include "security/tls_credentials.h"

namespace fedberry::security {

struct ServerTransportOptions {
  std::string listen;     // --listen, host:port
  ServerTlsFiles tls;     // --tls_cert, --tls_key, --client_ca
  std::string revoked;    // --revoked: a CRL or a list of names/fingerprints
  bool insecure = false;  // --insecure: plaintext beyond loopback
};

struct ServerTransport {
  std::shared_ptr<grpc::ServerCredentials> credentials;  // null: plaintext
  std::unique_ptr<RevocationList> revoked;               // null: none
  AccessPolicy access;      // points into `revoked`
  std::string description;  // for the start-up log
};

// InvalidArgument (a flag combination that makes no sense, or plaintext on
// a non-loopback address without --insecure), or the file errors of
// MakeServerCredentials and RevocationList::Open.
absl::StatusOr<ServerTransport> MakeServerTransport(
    const ServerTransportOptions& options, absl::Time now);

struct ClientTransportOptions {
  std::string server;  // --server, host:port
  ClientTlsFiles tls;  // --tls_ca, --tls_cert, --tls_key, --tls_server_name
  bool insecure = false;
};

struct ClientTransport {
  std::shared_ptr<grpc::Channel> channel;
  // This board's certificate name (CN, or its first DNS name); empty
  // without a board certificate. The board joins under it.
  std::string certificate_name;
  std::string description;
  // Why the server would refuse this board's transport (ProbeTransport
  // with these files); for the agent to call after a failed connection.
  std::function<absl::Status()> probe;
};

// The channel to the server with wire::ClientChannelArguments(). Same
// rules and errors as MakeServerTransport, for the board's side.
absl::StatusOr<ClientTransport> MakeClientTransport(
    const ClientTransportOptions& options, grpc::ChannelArguments arguments,
    absl::Time now);

}  // namespace fedberry::security

#endif  // FEDBERRY_SECURITY_TRANSPORT_H_
