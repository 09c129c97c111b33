#include "pki/openssl_helpers.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <algorithm>
#include <climits>
#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "crypto/openssl_errors.h"

namespace fedberry::pki::internal {

using crypto::KeyPtr;
using crypto::OpenSslError;

BioPtr ReadBio(absl::string_view text) {
  return BioPtr(BIO_new_mem_buf(
      text.data(), static_cast<int>(std::min<size_t>(text.size(), INT_MAX))));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

int NoPassphrase(char*, int, int, void*) { return 0; }

absl::StatusOr<X509StackPtr> ParseCertificates(absl::string_view pem,
                                               absl::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  X509StackPtr certs(sk_X509_new_null());
  if (!bio || !certs) return OpenSslError("out of memory");
  while (X509* cert =
             PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    if (sk_X509_push(certs.get(), cert) <= 0) {
      X509_free(cert);
      return OpenSslError("out of memory");
    }
  }
  // The loop ends on "no start line" at the end of the text: expected once
  // something was read, the whole story otherwise.
  const unsigned long last = ERR_peek_last_error();
  const bool clean_end = ERR_GET_LIB(last) == ERR_LIB_PEM &&
                         ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
  if (sk_X509_num(certs.get()) == 0) {
    return OpenSslError(absl::StrCat(what, ": no PEM certificate in it"),
                        absl::StatusCode::kInvalidArgument);
  }
  if (!clean_end && last != 0) {
    return OpenSslError(absl::StrCat(what, ": a certificate does not parse"),
                        absl::StatusCode::kInvalidArgument);
  }
  ERR_clear_error();
  return certs;
}

absl::StatusOr<X509Ptr> ParseFirstCertificate(absl::string_view pem,
                                              absl::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  if (!bio) return OpenSslError("out of memory");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!cert) {
    return OpenSslError(absl::StrCat(what, ": no PEM certificate that parses"),
                        absl::StatusCode::kInvalidArgument);
  }
  return cert;
}

absl::StatusOr<KeyPtr> ParsePrivateKey(absl::string_view pem,
                                       absl::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  if (!bio) return OpenSslError("out of memory");
  KeyPtr key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) {
    return OpenSslError(
        absl::StrCat(what, ": not an unencrypted PEM private key"),
        absl::StatusCode::kInvalidArgument);
  }
  return key;
}

std::string NameText(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253) < 0) {
    ERR_clear_error();
    return "";
  }
  return BioText(bio.get());
}

std::string SerialHex(const ASN1_INTEGER* serial) {
  BignumPtr bn(ASN1_INTEGER_to_BN(serial, nullptr));
  if (!bn) {
    ERR_clear_error();
    return "";
  }
  char* hex = BN_bn2hex(bn.get());
  if (hex == nullptr) {
    ERR_clear_error();
    return "";
  }
  std::string out = absl::AsciiStrToLower(hex);
  OPENSSL_free(hex);
  return out;
}

absl::Time FromAsn1Time(const ASN1_TIME* t) {
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    ERR_clear_error();
    return absl::InfinitePast();
  }
  return absl::FromTimeT(timegm(&tm));
}

std::string UtcText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

bool InAsn1Range(absl::Time t) {
  static const absl::Time kFirst = absl::FromCivil(
      absl::CivilSecond(1950, 1, 1, 0, 0, 0), absl::UTCTimeZone());
  static const absl::Time kEnd = absl::FromCivil(
      absl::CivilSecond(9999, 12, 31, 23, 59, 59), absl::UTCTimeZone());
  return t >= kFirst && t <= kEnd;
}

bool IsCa(X509* cert) {
  return (X509_get_extension_flags(cert) & EXFLAG_CA) != 0;
}

absl::StatusOr<Ca> LoadCa(const std::string& cert_pem,
                          const std::string& key_pem) {
  Ca ca;
  absl::StatusOr<X509Ptr> cert = ParseFirstCertificate(cert_pem, "CA");
  if (!cert.ok()) return cert.status();
  ca.cert = *std::move(cert);
  absl::StatusOr<KeyPtr> key = ParsePrivateKey(key_pem, "CA key");
  if (!key.ok()) return key.status();
  ca.key = *std::move(key);
  const std::string subject = NameText(X509_get_subject_name(ca.cert.get()));
  if (!IsCa(ca.cert.get())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", subject,
        "' is not a CA certificate (no basicConstraints CA:TRUE)"));
  }
  if (X509_check_private_key(ca.cert.get(), ca.key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "the CA key is not the key of the CA certificate '", subject, "'"));
  }
  return ca;
}

}  // namespace fedberry::pki::internal
