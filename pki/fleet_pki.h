// The fleet's public-key infrastructure for mutual TLS: a self-signed fleet
// CA, server and board certificates it signs, a CRL of revoked ones, and the
// checks an operator or a server makes on them (facts, key match, chain
// verification at a given time). Everything is PEM text in and out, so the
// caller decides where files live (see pki/fleet_folder.h for the folder the
// fedberry-pki tool keeps). Built on OpenSSL 3's libcrypto; no hand-written
// cryptography.
//
// Keys are EC P-256, signatures ECDSA with SHA-256, serials 128 random bits.
//
// Thread-safety: every function is a pure function of its arguments (and
// OpenSSL's random generator); all may be called from several threads.
#ifndef FEDBERRY_PKI_FLEET_PKI_H_
#define FEDBERRY_PKI_FLEET_PKI_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fedberry::pki {

// When a certificate is valid: [not_before, not_after], both in 1950..9999.
struct Validity {
  absl::Time not_before;
  absl::Time not_after;
};

// PEM text of a certificate and its private key (unencrypted PKCS#8 PEM,
// "BEGIN PRIVATE KEY").
struct Issued {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed fleet CA: EC P-256 key, CN=`name`, basicConstraints critical
// CA:TRUE pathlen:0, keyUsage critical keyCertSign,cRLSign,
// subjectKeyIdentifier; SHA-256 signature, random 128-bit positive serial.
// InvalidArgument for an empty name, one longer than 64 bytes or with control
// characters, or a validity that ends before it starts or is out of range.
// Internal when OpenSSL fails.
absl::StatusOr<Issued> MakeCa(const std::string& name,
                              const Validity& validity);

enum class Role { kServer, kBoard };

// "server" or "board".
absl::string_view RoleName(Role role);

// OK for a certificate name: 1-64 characters of [A-Za-z0-9._-], not starting
// with '-' or '.' (so it is also a safe file name). InvalidArgument naming the
// problem otherwise.
absl::Status CheckName(absl::string_view name);

// OK for a subjectAltName entry: "DNS:host" (labels of [A-Za-z0-9-], 1-63
// characters, not starting or ending with '-'; at most 253 characters; no
// wildcards) or "IP:" with an IPv4 or IPv6 address. InvalidArgument otherwise.
absl::Status CheckSubjectAltName(absl::string_view san);

// A leaf signed by the CA: EC P-256, CN=`name`, subjectAltName = `sans`
// (entries "DNS:x" or "IP:1.2.3.4"/IPv6; empty: "DNS:<name>"),
// basicConstraints CA:FALSE, keyUsage critical digitalSignature,
// extendedKeyUsage serverAuth (kServer) or clientAuth (kBoard), subject and
// authority key identifiers. InvalidArgument for a bad name or SAN (see
// CheckName, CheckSubjectAltName), a bad validity, a CA certificate or key
// that does not parse, a key that is not the certificate's, or a certificate
// that is not a CA. Internal when OpenSSL fails.
absl::StatusOr<Issued> IssueCertificate(const std::string& ca_cert_pem,
                                        const std::string& ca_key_pem,
                                        Role role, const std::string& name,
                                        const std::vector<std::string>& sans,
                                        const Validity& validity);

struct CertificateFacts {
  std::string common_name;  // empty when absent
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_names;  // inet_ntop text ("10.0.0.1", "::1")
  // Lowercase hex as OpenSSL's BN_bn2hex writes it (whole bytes, so it may
  // start with one '0'); "0" for a zero serial.
  std::string serial_hex;
  std::string sha256_fingerprint;  // lowercase hex of SHA-256 over the DER
  std::string issuer;              // one-line RFC 2253 text, for logs
  absl::Time not_before;
  absl::Time not_after;
  bool is_ca = false;  // basicConstraints CA:TRUE
};

// Facts of the first certificate of a PEM chain. InvalidArgument when there
// is none or it does not parse.
absl::StatusOr<CertificateFacts> ReadCertificate(const std::string& pem);

// OK when the PEM private key (PKCS#8 or traditional; never prompts for a
// passphrase) belongs to the PEM certificate; InvalidArgument naming the
// mismatch, or what did not parse, otherwise.
absl::Status CheckKeyMatchesCertificate(const std::string& cert_pem,
                                        const std::string& key_pem);

// Verifies the first certificate of `cert_pem` (any further ones are offered
// as untrusted intermediates) against the trusted CA bundle `ca_pem` at time
// `at` (X509_verify_cert with X509_V_FLAG_USE_CHECK_TIME). InvalidArgument
// with OpenSSL's reason in words ("certificate has expired", "unable to get
// local issuer certificate", ...) when it does not verify or a PEM does not
// parse.
// With `for_role`, the certificate must also be fit for that role's side
// of TLS (OpenSSL's sslclient/sslserver purpose: extendedKeyUsage and
// keyUsage allow it).
absl::Status VerifyCertificate(const std::string& cert_pem,
                               const std::string& ca_pem, absl::Time at,
                               std::optional<Role> for_role = std::nullopt);

// A revoked certificate: its serial (as CertificateFacts::serial_hex, either
// case) and when it was revoked.
struct RevokedEntry {
  std::string serial_hex;
  absl::Time when;
};

// A CRL (PEM) signed by the CA: version 2, lastUpdate `now`, nextUpdate
// now + `next_update`, crlNumber `number`, authorityKeyIdentifier, the
// revoked entries sorted by serial. InvalidArgument for a bad serial, a
// non-positive `next_update`, or a CA certificate/key as for
// IssueCertificate. Internal when OpenSSL fails.
absl::StatusOr<std::string> MakeCrl(const std::string& ca_cert_pem,
                                    const std::string& ca_key_pem,
                                    const std::vector<RevokedEntry>& revoked,
                                    uint64_t number, absl::Time now,
                                    absl::Duration next_update);

struct CrlFacts {
  std::vector<std::string> revoked_serials;  // as CertificateFacts::serial_hex
  absl::Time next_update;  // absl::InfiniteFuture() when absent
  // Added to the specification: what `fedberry-pki revoke` increments.
  absl::Time last_update;
  uint64_t number = 0;  // crlNumber; 0 when absent
};

// Parses a CRL (PEM or DER) and checks its signature against the CA bundle
// `ca_pem` (any certificate in it whose subject is the CRL's issuer).
// DataLoss when the CRL does not parse; InvalidArgument when the bundle does
// not parse or no certificate in it signed the CRL.
absl::StatusOr<CrlFacts> ReadCrl(const std::string& crl_pem_or_der,
                                 const std::string& ca_pem);

}  // namespace fedberry::pki

#endif  // FEDBERRY_PKI_FLEET_PKI_H_
