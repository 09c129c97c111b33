#include "security/transport.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "security/tls_probe.h"

namespace fedberry::security {

absl::StatusOr<ServerTransport> MakeServerTransport(
    const ServerTransportOptions& options, absl::Time now) {
  const ServerTlsFiles& tls = options.tls;
  const bool tls_on = !tls.cert.empty() || !tls.key.empty();
  ServerTransport out;
  if (!tls_on) {
    if (!tls.client_ca.empty() || !options.revoked.empty()) {
      return absl::InvalidArgumentError(
          "--client_ca and --revoked need TLS: give --tls_cert and --tls_key "
          "too");
    }
    if (!options.insecure && !IsLoopbackAddress(options.listen)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to serve plaintext on ", options.listen,
          ": anyone on the network could join, read the model or push "
          "updates. Give --tls_cert and --tls_key (and --client_ca for "
          "board certificates; fedberry-pki makes them), or --insecure on a "
          "network you trust"));
    }
    out.description = options.insecure && !IsLoopbackAddress(options.listen)
                          ? "plaintext (--insecure: no encryption, anyone "
                            "who reaches the port can join)"
                          : "plaintext on loopback";
    return out;
  }
  if (options.insecure) {
    return absl::InvalidArgumentError(
        "--insecure and --tls_cert contradict each other: drop one");
  }
  if (!options.revoked.empty() && tls.client_ca.empty()) {
    return absl::InvalidArgumentError(
        "--revoked lists board certificates: it needs mutual TLS "
        "(--client_ca)");
  }
  auto credentials = MakeServerCredentials(tls, now);
  if (!credentials.ok()) return credentials.status();
  out.credentials = *std::move(credentials);
  if (tls.client_ca.empty()) {
    out.description =
        "TLS without board certificates (--client_ca off: any board that "
        "trusts this server's CA can join)";
    return out;
  }
  if (!options.revoked.empty()) {
    auto ca = ReadPemFile(tls.client_ca, "client_ca");
    if (!ca.ok()) return ca.status();
    auto revoked = RevocationList::Open(options.revoked, *ca);
    if (!revoked.ok()) return revoked.status();
    out.revoked = *std::move(revoked);
  }
  out.access = AccessPolicy::MutualTls(out.revoked.get());
  out.description = absl::StrCat(
      "mutual TLS (boards need a certificate from ", tls.client_ca, ")",
      out.revoked ? absl::StrCat(", ", out.revoked->size(), " revoked in ",
                                 options.revoked)
                  : "");
  return out;
}

absl::StatusOr<ClientTransport> MakeClientTransport(
    const ClientTransportOptions& options, grpc::ChannelArguments arguments,
    absl::Time now) {
  const ClientTlsFiles& tls = options.tls;
  const bool tls_on = !tls.ca.empty() || !tls.cert.empty() ||
                      !tls.key.empty() || !tls.server_name.empty();
  ClientTransport out;
  if (!tls_on) {
    if (!options.insecure && !IsLoopbackAddress(options.server)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to dial ", options.server,
          " in plaintext: this board's updates and the model would cross "
          "the network unencrypted and unauthenticated. Give --tls_ca (and "
          "--tls_cert/--tls_key for mutual TLS), or --insecure on a network "
          "you trust"));
    }
    out.channel = grpc::CreateCustomChannel(
        options.server, grpc::InsecureChannelCredentials(), arguments);
    out.description = "plaintext";
    out.probe = [server = options.server] {
      return ProbeTransport(server, nullptr);
    };
    return out;
  }
  if (options.insecure) {
    return absl::InvalidArgumentError(
        "--insecure and --tls_ca contradict each other: drop one");
  }
  auto credentials = MakeClientCredentials(tls, std::move(arguments), now);
  if (!credentials.ok()) return credentials.status();
  out.channel = grpc::CreateCustomChannel(
      options.server, credentials->credentials, credentials->arguments);
  out.certificate_name = credentials->board.common_name.empty() &&
                                 !credentials->board.dns_names.empty()
                             ? credentials->board.dns_names.front()
                             : credentials->board.common_name;
  out.probe = [server = options.server, tls] {
    return ProbeTransport(server, &tls);
  };
  out.description = tls.cert.empty()
                        ? absl::StrCat("TLS (server verified by ", tls.ca, ")")
                        : absl::StrCat("mutual TLS as '", out.certificate_name,
                                       "' (server verified by ", tls.ca, ")");
  return out;
}

}  // namespace fedberry::security
