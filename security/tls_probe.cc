#include "security/tls_probe.h"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fedberry::security {
namespace {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;

// Closes the socket at scope exit.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// host and port of "host:port" / "[v6]:port".
bool SplitAddress(const std::string& address, std::string* host,
                  std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  absl::string_view h = absl::string_view(address).substr(0, colon);
  absl::ConsumePrefix(&h, "ipv4:");
  absl::ConsumePrefix(&h, "ipv6:");
  if (absl::ConsumePrefix(&h, "[")) absl::ConsumeSuffix(&h, "]");
  *host = std::string(h);
  *port = address.substr(colon + 1);
  return !host->empty() && !port->empty();
}

int Connect(const std::string& host, const std::string& port,
            absl::Duration timeout) {
  addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  const timeval tv = absl::ToTimeval(timeout);
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

// OpenSSL's reason for the last failure, lowercase, and the queue cleared.
std::string SslReason() {
  const unsigned long e = ERR_peek_last_error();
  std::string reason;
  if (e != 0) {
    const char* r = ERR_reason_error_string(e);
    reason = r != nullptr ? r : absl::StrCat("error ", e);
  }
  ERR_clear_error();
  return absl::AsciiStrToLower(reason);
}

absl::Status Refused(const std::string& what, const std::string& fix) {
  return absl::PermissionDeniedError(
      absl::StrCat("TLS handshake refused: ", what, " -- ", fix));
}

// What a TLS failure `reason` (OpenSSL's words) means for the board.
absl::Status Explain(const std::string& reason, long verify_result) {
  if (verify_result != X509_V_OK) {
    const std::string why = X509_verify_cert_error_string(verify_result);
    if (verify_result == X509_V_ERR_HOSTNAME_MISMATCH) {
      return Refused(
          absl::StrCat("the server's certificate: ", why),
          "it does not list the host in --server; dial a name it lists, or "
          "set --tls_server_name");
    }
    return Refused(
        absl::StrCat("the server's certificate: ", why),
        "check that --tls_ca is the fleet CA that signed the server's "
        "certificate, and this board's clock");
  }
  if (absl::StrContains(reason, "certificate required")) {
    return Refused("the server requires a board certificate (" + reason + ")",
                   "give --tls_cert and --tls_key (fedberry-pki board NAME)");
  }
  if (absl::StrContains(reason, "unknown ca")) {
    return Refused(
        "the server does not know the CA of this board's certificate (" +
            reason + ")",
        "use a certificate issued by the fleet CA the server trusts "
        "(--client_ca on the server)");
  }
  if (absl::StrContains(reason, "expired")) {
    return Refused("the server says a certificate expired (" + reason + ")",
                   "renew this board's certificate, and check its clock");
  }
  if (absl::StrContains(reason, "bad certificate") ||
      absl::StrContains(reason, "unsupported certificate") ||
      absl::StrContains(reason, "certificate unknown")) {
    return Refused(
        "the server refused this board's certificate (" + reason + ")",
        "use a certificate issued by the fleet CA, still valid, "
        "for client authentication");
  }
  if (absl::StrContains(reason, "wrong version") ||
      absl::StrContains(reason, "packet length") ||
      absl::StrContains(reason, "record layer failure") ||
      absl::StrContains(reason, "http request") ||
      absl::StrContains(reason, "unexpected eof")) {
    return Refused("the server does not speak TLS (" + reason + ")",
                   "it serves plaintext: drop --tls_ca/--tls_cert/--tls_key "
                   "and use --insecure, or turn TLS on at the server");
  }
  return Refused(
      reason.empty() ? "the connection closed during the handshake" : reason,
      "check --tls_ca, --tls_cert, --tls_key and --server against "
      "the server's certificates");
}

// A client context that verifies the server against the fleet CA and
// presents the board's certificate when `verify`, else checks nothing.
absl::StatusOr<SslCtxPtr> MakeContext(const ClientTlsFiles* tls, bool verify) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return absl::InternalError("OpenSSL: no TLS context");
  if (verify) {
    if (SSL_CTX_load_verify_locations(ctx.get(), tls->ca.c_str(), nullptr) !=
        1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls_ca ", tls->ca, ": ", SslReason()));
    }
    if (!tls->cert.empty() &&
        (SSL_CTX_use_certificate_chain_file(ctx.get(), tls->cert.c_str()) !=
             1 ||
         SSL_CTX_use_PrivateKey_file(ctx.get(), tls->key.c_str(),
                                     SSL_FILETYPE_PEM) != 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls_cert/--tls_key: ", SslReason()));
    }
  }
  SSL_CTX_set_verify(ctx.get(), verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE,
                     nullptr);
  return ctx;
}

// A connection on `fd` that offers what the board's channel offers: the
// server name (checked against the certificate when `verify`) and h2.
absl::StatusOr<SslPtr> MakeConnection(SSL_CTX* ctx, int fd,
                                      const std::string& name, bool verify) {
  SslPtr ssl(SSL_new(ctx));
  if (!ssl) return absl::InternalError("OpenSSL: no TLS connection");
  SSL_set_tlsext_host_name(ssl.get(), name.c_str());
  if (verify) SSL_set1_host(ssl.get(), name.c_str());
  static const unsigned char kAlpn[] = {2, 'h', '2'};  // what gRPC offers
  SSL_set_alpn_protos(ssl.get(), kAlpn, sizeof(kAlpn));
  SSL_set_fd(ssl.get(), fd);
  return ssl;
}

// What a failed handshake on `ssl` (SSL_connect returned `rc`) says.
absl::Status HandshakeFailed(SSL* ssl, int rc, bool verify,
                             const std::string& address) {
  const int error = SSL_get_error(ssl, rc);
  const std::string reason = SslReason();
  if (!verify) return absl::OkStatus();  // not TLS: a plaintext server
  // No answer at all (a timeout: WANT_READ on the blocking socket; a
  // reset: SYSCALL): the network's or an overloaded server's doing, not
  // a refusal, which always comes with TLS's words.
  if (reason.empty() &&
      (error == SSL_ERROR_SYSCALL || error == SSL_ERROR_WANT_READ ||
       error == SSL_ERROR_WANT_WRITE)) {
    return absl::UnavailableError(absl::StrCat("no TLS answer from ", address));
  }
  return Explain(reason, SSL_get_verify_result(ssl));
}

// After the handshake. TLS 1.3: the server judges the board's certificate
// now; an accepted board hears the server's HTTP/2 settings, a refused one
// an alert.
absl::Status AwaitVerdict(SSL* ssl, const ClientTlsFiles& tls,
                          const std::string& address) {
  char byte;
  const int read = SSL_read(ssl, &byte, 1);
  if (read > 0) return absl::OkStatus();
  const int error = SSL_get_error(ssl, read);
  const std::string reason = SslReason();
  const bool hung_up = error == SSL_ERROR_ZERO_RETURN ||
                       absl::StrContains(reason, "unexpected eof");
  if (!hung_up && reason.empty()) {  // a timeout or a reset
    return absl::UnavailableError(absl::StrCat(
        "the server at ", address, " said nothing after the TLS handshake"));
  }
  if (hung_up) {
    // The server judged the board's certificate and hung up without an
    // alert: its log names the certificate and the reason.
    return Refused(
        "the server closed the connection right after the handshake: it "
        "does not accept this board's certificate",
        tls.cert.empty()
            ? "this board presents none: give --tls_cert and --tls_key "
              "(fedberry-pki board NAME)"
            : "it must be issued by the fleet CA the server trusts "
              "(--client_ca), be valid now, and be made for a board "
              "(fedberry-pki board NAME); the server's log says which");
  }
  return Explain(reason, X509_V_OK);
}

}  // namespace

absl::Status ProbeTransport(const std::string& address,
                            const ClientTlsFiles* tls, absl::Duration timeout) {
  std::string host, port;
  if (!SplitAddress(address, &host, &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "' is not host:port"));
  }
  Socket socket(Connect(host, port, timeout));
  if (socket.fd() < 0) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", address));
  }
  const bool verify = tls != nullptr && !tls->ca.empty();
  absl::StatusOr<SslCtxPtr> ctx = MakeContext(tls, verify);
  if (!ctx.ok()) return ctx.status();
  const std::string name =
      verify && !tls->server_name.empty() ? tls->server_name : host;
  absl::StatusOr<SslPtr> ssl =
      MakeConnection(ctx->get(), socket.fd(), name, verify);
  if (!ssl.ok()) return ssl.status();
  ERR_clear_error();
  if (const int rc = SSL_connect(ssl->get()); rc != 1) {
    return HandshakeFailed(ssl->get(), rc, verify, address);
  }
  if (!verify) {
    return Refused("the server speaks TLS and this board dials plaintext",
                   "give --tls_ca (and --tls_cert/--tls_key for mutual TLS)");
  }
  return AwaitVerdict(ssl->get(), *tls, address);
}

}  // namespace fedberry::security
