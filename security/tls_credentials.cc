#include "security/tls_credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "security/board_certificate_verifier.h"

namespace fedberry::security {
namespace {

using grpc::experimental::FileWatcherCertificateProvider;

std::string Day(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--", flag, ": cannot read ", path));
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string pem = bytes.str();
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", path, " is not a PEM file"));
  }
  return pem;
}

absl::StatusOr<pki::CertificateFacts> CheckKeyPair(const std::string& cert_path,
                                                   const std::string& key_path,
                                                   absl::Time now,
                                                   const std::string& ca_pem) {
  if (cert_path.empty() != key_path.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key go together: give both or neither");
  }
  auto cert = ReadPemFile(cert_path, "tls_cert");
  if (!cert.ok()) return cert.status();
  auto key = ReadPemFile(key_path, "tls_key");
  if (!key.ok()) return key.status();
  auto facts = pki::ReadCertificate(*cert);
  if (!facts.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_cert: ", cert_path, ": ", facts.status().message()));
  }
  if (absl::Status match = pki::CheckKeyMatchesCertificate(*cert, *key);
      !match.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_key ", key_path, " does not belong to --tls_cert ",
                     cert_path, ": ", match.message()));
  }
  if (now >= facts->not_after) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--tls_cert ", cert_path, " ('", facts->common_name, "') expired on ",
        Day(facts->not_after), "; issue a new one (fedberry-pki board|server ",
        facts->common_name, ")"));
  }
  if (now < facts->not_before) {
    return absl::FailedPreconditionError(
        absl::StrCat("--tls_cert ", cert_path, " ('", facts->common_name,
                     "') is not valid before ", Day(facts->not_before),
                     " and this clock "
                     "says ",
                     Day(now),
                     ": check the clock (a Raspberry Pi has no "
                     "real-time clock; wait for NTP) or the certificate"));
  }
  if (!ca_pem.empty()) {
    if (absl::Status signed_by = pki::VerifyCertificate(*cert, ca_pem, now);
        !signed_by.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--tls_cert ", cert_path, " does not verify against --tls_ca (",
          signed_by.message(),
          "): the server will refuse it; use a "
          "certificate issued by the fleet CA"));
    }
  }
  return facts;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files, absl::Time now) {
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls_cert and --tls_key");
  }
  auto facts = CheckKeyPair(files.cert, files.key, now);
  if (!facts.ok()) return facts.status();
  std::shared_ptr<FileWatcherCertificateProvider> provider;
  if (!files.client_ca.empty()) {
    auto ca = ReadPemFile(files.client_ca, "client_ca");
    if (!ca.ok()) return ca.status();
    if (!pki::ReadCertificate(*ca).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--client_ca: ", files.client_ca, " holds no readable certificate"));
    }
    provider = std::make_shared<FileWatcherCertificateProvider>(
        files.key, files.cert, files.client_ca, kCertificateRefreshSeconds);
  } else {
    provider = std::make_shared<FileWatcherCertificateProvider>(
        files.key, files.cert, kCertificateRefreshSeconds);
  }
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!files.client_ca.empty()) {
    options.watch_root_certs();
    // The handshake refuses a board without a certificate; the verifier
    // refuses one not from the fleet CA, expired or not for clients, and
    // logs which board it was (see board_certificate_verifier.h).
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
    options.set_certificate_verifier(
        MakeBoardCertificateVerifier(files.client_ca));
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

absl::StatusOr<ClientCredentials> MakeClientCredentials(
    const ClientTlsFiles& files, grpc::ChannelArguments arguments,
    absl::Time now) {
  if (files.ca.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs --tls_ca: the fleet CA certificate that signs the server");
  }
  auto ca = ReadPemFile(files.ca, "tls_ca");
  if (!ca.ok()) return ca.status();
  if (!pki::ReadCertificate(*ca).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_ca: ", files.ca, " holds no readable certificate"));
  }
  ClientCredentials out;
  std::shared_ptr<FileWatcherCertificateProvider> provider;
  if (!files.cert.empty() || !files.key.empty()) {
    auto facts = CheckKeyPair(files.cert, files.key, now, *ca);
    if (!facts.ok()) return facts.status();
    out.board = *std::move(facts);
    provider = std::make_shared<FileWatcherCertificateProvider>(
        files.key, files.cert, files.ca, kCertificateRefreshSeconds);
  } else {
    provider = std::make_shared<FileWatcherCertificateProvider>(
        files.ca, kCertificateRefreshSeconds);
  }
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider);
  options.watch_root_certs();
  if (!files.cert.empty()) options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  // The server's certificate must name the host the board dials.
  options.set_certificate_verifier(
      std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
  options.set_check_call_host(true);
  if (!files.server_name.empty()) {
    arguments.SetSslTargetNameOverride(files.server_name);
  }
  out.credentials = grpc::experimental::TlsCredentials(options);
  if (out.credentials == nullptr) {
    return absl::InternalError("gRPC refused the TLS channel options");
  }
  out.arguments = std::move(arguments);
  return out;
}

bool IsLoopbackAddress(const std::string& address) {
  absl::string_view host = address;
  if (size_t colon = host.rfind(':');
      colon != absl::string_view::npos && !absl::EndsWith(host, "]")) {
    host = host.substr(0, colon);
  }
  absl::ConsumePrefix(&host, "ipv4:");
  absl::ConsumePrefix(&host, "ipv6:");
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace fedberry::security
