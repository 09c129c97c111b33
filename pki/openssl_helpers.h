// Internal to pki, not part of its API: the OpenSSL plumbing that pki's own
// .cc files share (fleet_pki.cc issues, fleet_verify.cc reads and verifies,
// fleet_crl.cc makes and reads CRLs): unique_ptr owners for the X509 family
// of OpenSSL's objects, PEM parsing, names, serials and ASN.1 times as text,
// and loading the CA. The EVP owners and the error queue as status text are
// crypto/'s (openssl_owners.h, openssl_errors.h). Users include
// pki/fleet_pki.h. Thread-safety: functions without shared state; OpenSSL's
// error queue, which they read and clear, is per thread.
#ifndef FEDBERRY_PKI_OPENSSL_HELPERS_H_
#define FEDBERRY_PKI_OPENSSL_HELPERS_H_

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "crypto/openssl_owners.h"

namespace fedberry::pki::internal {

// unique_ptr owners for the X509 family of OpenSSL objects that pki alone
// holds (crypto/openssl_owners.h has the EVP ones, KeyPtr among them).
using crypto::FreeWith;
struct FreeX509Stack {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using Asn1IntegerPtr =
    std::unique_ptr<ASN1_INTEGER, FreeWith<ASN1_INTEGER_free>>;
using Asn1TimePtr = std::unique_ptr<ASN1_TIME, FreeWith<ASN1_TIME_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, FreeWith<BN_free>>;
using BioPtr = std::unique_ptr<BIO, FreeWith<BIO_free_all>>;
using CrlPtr = std::unique_ptr<X509_CRL, FreeWith<X509_CRL_free>>;
using ExtensionPtr =
    std::unique_ptr<X509_EXTENSION, FreeWith<X509_EXTENSION_free>>;
using GeneralNamePtr =
    std::unique_ptr<GENERAL_NAME, FreeWith<GENERAL_NAME_free>>;
using GeneralNamesPtr =
    std::unique_ptr<GENERAL_NAMES, FreeWith<GENERAL_NAMES_free>>;
using RevokedPtr = std::unique_ptr<X509_REVOKED, FreeWith<X509_REVOKED_free>>;
using StoreCtxPtr =
    std::unique_ptr<X509_STORE_CTX, FreeWith<X509_STORE_CTX_free>>;
using StorePtr = std::unique_ptr<X509_STORE, FreeWith<X509_STORE_free>>;
using X509Ptr = std::unique_ptr<X509, FreeWith<X509_free>>;
using X509StackPtr = std::unique_ptr<STACK_OF(X509), FreeX509Stack>;

// A read-only memory BIO over `text`; its bytes must outlive it.
BioPtr ReadBio(absl::string_view text);
// What was written into a memory BIO.
std::string BioText(BIO* bio);

// A PEM passphrase callback that never prompts on a terminal for an
// encrypted key's passphrase.
int NoPassphrase(char*, int, int, void*);

// Every certificate of a PEM bundle; InvalidArgument naming `what` when it
// holds none or one does not parse.
absl::StatusOr<X509StackPtr> ParseCertificates(absl::string_view pem,
                                               absl::string_view what);
// Only the first: what follows it (a chain, anything) is not looked at.
absl::StatusOr<X509Ptr> ParseFirstCertificate(absl::string_view pem,
                                              absl::string_view what);
absl::StatusOr<crypto::KeyPtr> ParsePrivateKey(absl::string_view pem,
                                               absl::string_view what);

// RFC 2253 text of a name, lowercase hex of a serial ("" when it cannot be
// had), and an ASN.1 time (InfinitePast when it does not parse).
std::string NameText(const X509_NAME* name);
std::string SerialHex(const ASN1_INTEGER* serial);
absl::Time FromAsn1Time(const ASN1_TIME* t);
// "2026-01-02T03:04:05Z".
std::string UtcText(absl::Time t);

// RFC 5280 times run from 1950 (UTCTime) to 9999 (GeneralizedTime).
bool InAsn1Range(absl::Time t);

// Whether basicConstraints says CA:TRUE.
bool IsCa(X509* cert);

struct Ca {
  X509Ptr cert;
  crypto::KeyPtr key;
};

// The CA's certificate and key, checked to be a CA and to belong together;
// InvalidArgument otherwise.
absl::StatusOr<Ca> LoadCa(const std::string& cert_pem,
                          const std::string& key_pem);

}  // namespace fedberry::pki::internal

#endif  // FEDBERRY_PKI_OPENSSL_HELPERS_H_
