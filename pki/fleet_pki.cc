#include "pki/fleet_pki.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <ctime>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fedberry::pki {
namespace {

// unique_ptr deleters for OpenSSL's free functions.
template <auto kFree>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    kFree(p);
  }
};
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
using KeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;
using RevokedPtr = std::unique_ptr<X509_REVOKED, FreeWith<X509_REVOKED_free>>;
using StoreCtxPtr =
    std::unique_ptr<X509_STORE_CTX, FreeWith<X509_STORE_CTX_free>>;
using StorePtr = std::unique_ptr<X509_STORE, FreeWith<X509_STORE_free>>;
using X509Ptr = std::unique_ptr<X509, FreeWith<X509_free>>;
using X509StackPtr = std::unique_ptr<STACK_OF(X509), FreeX509Stack>;

constexpr size_t kMaxNameLength = 64;  // ub-common-name (RFC 5280)
constexpr size_t kSerialBytes = 16;

// Drains this thread's OpenSSL error queue into text (empty when it was
// empty), so one failure's reasons never leak into the next call's message.
std::string DrainErrors() {
  std::vector<std::string> reasons;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    reasons.emplace_back(buf);
  }
  if (reasons.empty()) return "";
  return absl::StrCat(" (OpenSSL: ", absl::StrJoin(reasons, "; "), ")");
}

absl::Status OpenSslFailure(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, DrainErrors()));
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(what, DrainErrors()));
}

BioPtr ReadBio(absl::string_view text) {
  return BioPtr(BIO_new_mem_buf(
      text.data(), static_cast<int>(std::min<size_t>(text.size(), INT_MAX))));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

// Never prompt on a terminal for an encrypted key's passphrase.
int NoPassphrase(char*, int, int, void*) { return 0; }

absl::StatusOr<X509StackPtr> ParseCertificates(absl::string_view pem,
                                               absl::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  X509StackPtr certs(sk_X509_new_null());
  if (!bio || !certs) return OpenSslFailure("out of memory");
  while (X509* cert =
             PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    if (sk_X509_push(certs.get(), cert) <= 0) {
      X509_free(cert);
      return OpenSslFailure("out of memory");
    }
  }
  // The loop ends on "no start line" at the end of the text: expected once
  // something was read, the whole story otherwise.
  const unsigned long last = ERR_peek_last_error();
  const bool clean_end = ERR_GET_LIB(last) == ERR_LIB_PEM &&
                         ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
  if (sk_X509_num(certs.get()) == 0) {
    return Invalid(absl::StrCat(what, ": no PEM certificate in it"));
  }
  if (!clean_end && last != 0) {
    return Invalid(absl::StrCat(what, ": a certificate does not parse"));
  }
  ERR_clear_error();
  return certs;
}

// Only the first: what follows it (a chain, anything) is not looked at.
absl::StatusOr<X509Ptr> ParseFirstCertificate(absl::string_view pem,
                                              absl::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  if (!bio) return OpenSslFailure("out of memory");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!cert) {
    return Invalid(absl::StrCat(what, ": no PEM certificate that parses"));
  }
  return cert;
}

absl::StatusOr<KeyPtr> ParsePrivateKey(absl::string_view pem,
                                       absl::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  if (!bio) return OpenSslFailure("out of memory");
  KeyPtr key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) {
    return Invalid(absl::StrCat(what, ": not an unencrypted PEM private key"));
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

// RFC 5280 times run from 1950 (UTCTime) to 9999 (GeneralizedTime).
bool InAsn1Range(absl::Time t) {
  static const absl::Time kFirst = absl::FromCivil(
      absl::CivilSecond(1950, 1, 1, 0, 0, 0), absl::UTCTimeZone());
  static const absl::Time kEnd = absl::FromCivil(
      absl::CivilSecond(9999, 12, 31, 23, 59, 59), absl::UTCTimeZone());
  return t >= kFirst && t <= kEnd;
}

absl::Status CheckValidity(const Validity& validity) {
  if (!InAsn1Range(validity.not_before) || !InAsn1Range(validity.not_after)) {
    return absl::InvalidArgumentError(
        "validity out of range: certificates carry years 1950 to 9999");
  }
  if (validity.not_after <= validity.not_before) {
    return absl::InvalidArgumentError(absl::StrCat(
        "validity ends (", UtcText(validity.not_after), ") before it starts (",
        UtcText(validity.not_before), ")"));
  }
  return absl::OkStatus();
}

absl::Status SetTime(ASN1_TIME* field, absl::Time t) {
  if (ASN1_TIME_set(field, absl::ToTimeT(t)) == nullptr) {
    return OpenSslFailure("cannot set a certificate time");
  }
  return absl::OkStatus();
}

absl::StatusOr<KeyPtr> NewKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslFailure("cannot generate an EC P-256 key");
  return key;
}

absl::Status SetRandomSerial(X509* cert) {
  unsigned char bytes[kSerialBytes];
  BignumPtr bn;
  do {
    if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
      return OpenSslFailure("no random bytes for a serial number");
    }
    bn.reset(BN_bin2bn(bytes, sizeof(bytes), nullptr));
    if (!bn) return OpenSslFailure("out of memory");
  } while (BN_is_zero(bn.get()));  // serials are positive (RFC 5280 4.1.2.2)
  if (BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return OpenSslFailure("cannot set the serial number");
  }
  return absl::OkStatus();
}

absl::Status SetCommonName(X509_NAME* name, const std::string& cn) {
  if (X509_NAME_add_entry_by_txt(
          name, "CN", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>(cn.data()),
          static_cast<int>(cn.size()), -1, 0) != 1) {
    return Invalid(absl::StrCat("cannot use '", cn, "' as a common name"));
  }
  return absl::OkStatus();
}

// One extension in openssl.cnf syntax ("critical,CA:TRUE"), as the openssl
// CLI's -addext would add it.
absl::Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid,
                          const char* value) {
  ExtensionPtr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslFailure(
        absl::StrCat("cannot add the extension ", OBJ_nid2sn(nid), "=", value));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return OpenSslFailure("cannot write the certificate as PEM");
  }
  return BioText(bio.get());
}

// PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted: the file's mode protects it.
absl::StatusOr<std::string> PrivateKeyPem(EVP_PKEY* key) {
  // Secure memory (when the process set it up) and cleared on free.
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0,
                                       nullptr, nullptr) != 1) {
    return OpenSslFailure("cannot write the private key as PEM");
  }
  return BioText(bio.get());
}

absl::StatusOr<Issued> SignAndEncode(X509* cert, EVP_PKEY* signer,
                                     EVP_PKEY* key) {
  if (X509_sign(cert, signer, EVP_sha256()) <= 0) {
    return OpenSslFailure("cannot sign the certificate");
  }
  Issued issued;
  absl::StatusOr<std::string> cert_pem = CertificatePem(cert);
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem = PrivateKeyPem(key);
  if (!key_pem.ok()) return key_pem.status();
  issued.cert_pem = *std::move(cert_pem);
  issued.key_pem = *std::move(key_pem);
  return issued;
}

bool IsCa(X509* cert) {
  return (X509_get_extension_flags(cert) & EXFLAG_CA) != 0;
}

struct Ca {
  X509Ptr cert;
  KeyPtr key;
};

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

bool IsDnsLabelChar(char c) { return absl::ascii_isalnum(c) || c == '-'; }

absl::Status CheckDnsName(absl::string_view host) {
  if (host.empty() || host.size() > 253) {
    return absl::InvalidArgumentError(
        absl::StrCat("DNS name '", host, "' must have 1 to 253 characters"));
  }
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' ||
        label.back() == '-' ||
        !std::all_of(label.begin(), label.end(), IsDnsLabelChar)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DNS name '", host,
          "': each dot-separated label needs 1 to 63 letters, digits or "
          "'-', not at either end"));
    }
  }
  return absl::OkStatus();
}

// IPv4 or IPv6 address bytes; empty when `text` is neither.
std::string IpBytes(absl::string_view text) {
  const std::string s(text);
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
    return std::string(reinterpret_cast<char*>(buf), 4);
  }
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return std::string(reinterpret_cast<char*>(buf), 16);
  }
  return "";
}

absl::StatusOr<GeneralNamePtr> ToGeneralName(absl::string_view san) {
  if (absl::Status s = CheckSubjectAltName(san); !s.ok()) return s;
  GeneralNamePtr name(GENERAL_NAME_new());
  if (!name) return OpenSslFailure("out of memory");
  if (absl::StartsWithIgnoreCase(san, "DNS:")) {
    const absl::string_view host = san.substr(4);
    ASN1_IA5STRING* ia5 = ASN1_IA5STRING_new();
    if (ia5 == nullptr ||
        ASN1_STRING_set(ia5, host.data(), static_cast<int>(host.size())) != 1) {
      ASN1_IA5STRING_free(ia5);
      return OpenSslFailure("out of memory");
    }
    GENERAL_NAME_set0_value(name.get(), GEN_DNS, ia5);
  } else {
    const std::string bytes = IpBytes(san.substr(3));
    ASN1_OCTET_STRING* ip = ASN1_OCTET_STRING_new();
    if (ip == nullptr ||
        ASN1_OCTET_STRING_set(
            ip, reinterpret_cast<const unsigned char*>(bytes.data()),
            static_cast<int>(bytes.size())) != 1) {
      ASN1_OCTET_STRING_free(ip);
      return OpenSslFailure("out of memory");
    }
    GENERAL_NAME_set0_value(name.get(), GEN_IPADD, ip);
  }
  return name;
}

absl::Status AddSubjectAltNames(X509* cert,
                                const std::vector<std::string>& sans) {
  GeneralNamesPtr names(GENERAL_NAMES_new());
  if (!names) return OpenSslFailure("out of memory");
  for (const std::string& san : sans) {
    absl::StatusOr<GeneralNamePtr> name = ToGeneralName(san);
    if (!name.ok()) return name.status();
    if (sk_GENERAL_NAME_push(names.get(), name->get()) <= 0) {
      return OpenSslFailure("out of memory");
    }
    name->release();
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0,
                        X509V3_ADD_DEFAULT) != 1) {
    return OpenSslFailure("cannot add subjectAltName");
  }
  return absl::OkStatus();
}

absl::StatusOr<Asn1IntegerPtr> SerialFromHex(const std::string& hex) {
  if (hex.empty() || hex.size() > 40 ||
      !std::all_of(hex.begin(), hex.end(),
                   [](char c) { return absl::ascii_isxdigit(c); })) {
    return absl::InvalidArgumentError(
        absl::StrCat("serial '", hex, "' is not 1 to 40 hexadecimal digits"));
  }
  BIGNUM* raw = nullptr;
  if (BN_hex2bn(&raw, hex.c_str()) != static_cast<int>(hex.size())) {
    BN_free(raw);
    return Invalid(absl::StrCat("serial '", hex, "' does not parse"));
  }
  BignumPtr bn(raw);
  Asn1IntegerPtr serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
  if (!serial) return OpenSslFailure("out of memory");
  return serial;
}

}  // namespace

absl::string_view RoleName(Role role) {
  return role == Role::kServer ? "server" : "board";
}

absl::Status CheckName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name '", name, "' must have 1 to ", kMaxNameLength, " characters"));
  }
  if (name.front() == '-' || name.front() == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat("name '", name, "' must not start with '-' or '.'"));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(
          absl::StrCat("name '", absl::CHexEscape(name),
                       "' may only hold letters, digits, '.', '_' and '-'"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSubjectAltName(absl::string_view san) {
  if (absl::StartsWithIgnoreCase(san, "DNS:")) {
    return CheckDnsName(san.substr(4));
  }
  if (absl::StartsWithIgnoreCase(san, "IP:")) {
    if (IpBytes(san.substr(3)).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "subjectAltName '", san, "' is not an IPv4 or IPv6 address"));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("subjectAltName '", absl::CHexEscape(san),
                   "' must be DNS:<host name> or IP:<address>"));
}

namespace {

// A version 3 certificate for `name` (CN) with a random serial, `key`'s
// public half and `validity`, issued by `issuer` (null: itself). Extensions
// and the signature are the caller's.
absl::StatusOr<X509Ptr> NewCertificate(const std::string& name, X509* issuer,
                                       EVP_PKEY* key,
                                       const Validity& validity) {
  X509Ptr cert(X509_new());
  if (!cert) return OpenSslFailure("out of memory");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return OpenSslFailure("cannot set the version");
  }
  if (absl::Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  if (absl::Status s = SetCommonName(X509_get_subject_name(cert.get()), name);
      !s.ok()) {
    return s;
  }
  if (X509_set_issuer_name(cert.get(),
                           X509_get_subject_name(
                               issuer != nullptr ? issuer : cert.get())) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslFailure("cannot set the issuer or public key");
  }
  if (absl::Status s =
          SetTime(X509_getm_notBefore(cert.get()), validity.not_before);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          SetTime(X509_getm_notAfter(cert.get()), validity.not_after);
      !s.ok()) {
    return s;
  }
  return cert;
}

}  // namespace

absl::StatusOr<Issued> MakeCa(const std::string& name,
                              const Validity& validity) {
  ERR_clear_error();
  if (name.empty() || name.size() > kMaxNameLength ||
      std::any_of(name.begin(), name.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("CA name '", absl::CHexEscape(name), "' must have 1 to ",
                     kMaxNameLength, " bytes and no control characters"));
  }
  if (absl::Status s = CheckValidity(validity); !s.ok()) return s;
  absl::StatusOr<KeyPtr> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<X509Ptr> cert =
      NewCertificate(name, nullptr, key->get(), validity);
  if (!cert.ok()) return cert.status();
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert->get(), cert->get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair<int, const char*>{NID_basic_constraints,
                                    "critical,CA:TRUE,pathlen:0"},
        {NID_key_usage, "critical,keyCertSign,cRLSign"},
        {NID_subject_key_identifier, "hash"}}) {
    if (absl::Status s = AddExtension(cert->get(), &ctx, nid, value); !s.ok()) {
      return s;
    }
  }
  return SignAndEncode(cert->get(), key->get(), key->get());
}

absl::StatusOr<Issued> IssueCertificate(const std::string& ca_cert_pem,
                                        const std::string& ca_key_pem,
                                        Role role, const std::string& name,
                                        const std::vector<std::string>& sans,
                                        const Validity& validity) {
  ERR_clear_error();
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  std::vector<std::string> alt_names = sans;
  if (alt_names.empty()) alt_names.push_back(absl::StrCat("DNS:", name));
  for (const std::string& san : alt_names) {
    if (absl::Status s = CheckSubjectAltName(san); !s.ok()) return s;
  }
  if (absl::Status s = CheckValidity(validity); !s.ok()) return s;
  absl::StatusOr<Ca> ca = LoadCa(ca_cert_pem, ca_key_pem);
  if (!ca.ok()) return ca.status();

  absl::StatusOr<KeyPtr> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<X509Ptr> cert =
      NewCertificate(name, ca->cert.get(), key->get(), validity);
  if (!cert.ok()) return cert.status();
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, ca->cert.get(), cert->get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair<int, const char*>{NID_basic_constraints, "CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature"},
        {NID_ext_key_usage,
         role == Role::kServer ? "serverAuth" : "clientAuth"},
        {NID_subject_key_identifier, "hash"},
        {NID_authority_key_identifier, "keyid:always"}}) {
    if (absl::Status s = AddExtension(cert->get(), &ctx, nid, value); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = AddSubjectAltNames(cert->get(), alt_names); !s.ok()) {
    return s;
  }
  return SignAndEncode(cert->get(), ca->key.get(), key->get());
}

absl::StatusOr<CertificateFacts> ReadCertificate(const std::string& pem) {
  absl::StatusOr<X509Ptr> cert = ParseFirstCertificate(pem, "certificate");
  if (!cert.ok()) return cert.status();
  X509* x = cert->get();
  CertificateFacts facts;

  const X509_NAME* subject = X509_get_subject_name(x);
  const int cn_index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (cn_index >= 0) {
    const ASN1_STRING* cn =
        X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, cn_index));
    unsigned char* utf8 = nullptr;
    const int n = ASN1_STRING_to_UTF8(&utf8, cn);
    if (n >= 0) {
      facts.common_name.assign(reinterpret_cast<char*>(utf8),
                               static_cast<size_t>(n));
    }
    OPENSSL_free(utf8);
  }

  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(x, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      facts.dns_names.emplace_back(
          reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
          static_cast<size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      const int length = ASN1_STRING_length(ip);
      char text[INET6_ADDRSTRLEN] = {};
      if ((length == 4 || length == 16) &&
          inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(ip),
                    text, sizeof(text))) {
        facts.ip_names.emplace_back(text);
      }
    }
  }

  facts.serial_hex = SerialHex(X509_get0_serialNumber(x));
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_length = 0;
  if (X509_digest(x, EVP_sha256(), md, &md_length) != 1) {
    return OpenSslFailure("cannot hash the certificate");
  }
  facts.sha256_fingerprint = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<char*>(md), md_length));
  facts.issuer = NameText(X509_get_issuer_name(x));
  facts.not_before = FromAsn1Time(X509_get0_notBefore(x));
  facts.not_after = FromAsn1Time(X509_get0_notAfter(x));
  facts.is_ca = IsCa(x);
  ERR_clear_error();
  return facts;
}

absl::Status CheckKeyMatchesCertificate(const std::string& cert_pem,
                                        const std::string& key_pem) {
  absl::StatusOr<X509Ptr> cert = ParseFirstCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<KeyPtr> key = ParsePrivateKey(key_pem, "private key");
  if (!key.ok()) return key.status();
  const EVP_PKEY* public_key = X509_get0_pubkey(cert->get());
  if (public_key == nullptr) {
    return Invalid("the certificate's public key does not parse");
  }
  if (EVP_PKEY_eq(public_key, key->get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("the private key (", EVP_PKEY_get0_type_name(key->get()),
                     ") does not belong to the certificate '",
                     NameText(X509_get_subject_name(cert->get())), "' (serial ",
                     SerialHex(X509_get0_serialNumber(cert->get())), ")"));
  }
  return absl::OkStatus();
}

absl::Status VerifyCertificate(const std::string& cert_pem,
                               const std::string& ca_pem, absl::Time at,
                               std::optional<Role> for_role) {
  absl::StatusOr<X509StackPtr> chain =
      ParseCertificates(cert_pem, "certificate");
  if (!chain.ok()) return chain.status();
  X509Ptr leaf(sk_X509_shift(chain->get()));
  absl::StatusOr<X509StackPtr> cas = ParseCertificates(ca_pem, "CA bundle");
  if (!cas.ok()) return cas.status();
  if (!InAsn1Range(at)) {
    return absl::InvalidArgumentError("verification time out of range");
  }

  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx) return OpenSslFailure("out of memory");
  for (int i = 0; i < sk_X509_num(cas->get()); ++i) {
    if (X509_STORE_add_cert(store.get(), sk_X509_value(cas->get(), i)) != 1) {
      return OpenSslFailure("cannot trust a CA certificate");
    }
  }
  if (X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), chain->get()) !=
      1) {
    return OpenSslFailure("cannot set up verification");
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_USE_CHECK_TIME);
  X509_VERIFY_PARAM_set_time(param, absl::ToTimeT(at));
  if (for_role) {
    X509_VERIFY_PARAM_set_purpose(param, *for_role == Role::kBoard
                                             ? X509_PURPOSE_SSL_CLIENT
                                             : X509_PURPOSE_SSL_SERVER);
  }

  const int verified = X509_verify_cert(ctx.get());
  if (verified == 1) {
    ERR_clear_error();
    return absl::OkStatus();
  }
  const int error = X509_STORE_CTX_get_error(ctx.get());
  const X509* failing = X509_STORE_CTX_get_current_cert(ctx.get());
  std::string where;
  if (failing != nullptr && X509_cmp(failing, leaf.get()) != 0) {
    where = absl::StrCat(" (at '", NameText(X509_get_subject_name(failing)),
                         "', depth ", X509_STORE_CTX_get_error_depth(ctx.get()),
                         ")");
  }
  ERR_clear_error();
  return absl::InvalidArgumentError(
      absl::StrCat("certificate '", NameText(X509_get_subject_name(leaf.get())),
                   "' does not verify at ", UtcText(at), ": ",
                   X509_verify_cert_error_string(error), where));
}

absl::StatusOr<std::string> MakeCrl(const std::string& ca_cert_pem,
                                    const std::string& ca_key_pem,
                                    const std::vector<RevokedEntry>& revoked,
                                    uint64_t number, absl::Time now,
                                    absl::Duration next_update) {
  ERR_clear_error();
  if (next_update <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the CRL's next update must come after its last update "
                     "(next_update ",
                     absl::FormatDuration(next_update), ")"));
  }
  if (!InAsn1Range(now) || !InAsn1Range(now + next_update)) {
    return absl::InvalidArgumentError("CRL times out of range");
  }
  absl::StatusOr<Ca> ca = LoadCa(ca_cert_pem, ca_key_pem);
  if (!ca.ok()) return ca.status();

  CrlPtr crl(X509_CRL_new());
  Asn1TimePtr last(ASN1_TIME_set(nullptr, absl::ToTimeT(now)));
  Asn1TimePtr next(ASN1_TIME_set(nullptr, absl::ToTimeT(now + next_update)));
  if (!crl || !last || !next) return OpenSslFailure("out of memory");
  if (X509_CRL_set_version(crl.get(), X509_CRL_VERSION_2) != 1 ||
      X509_CRL_set_issuer_name(crl.get(),
                               X509_get_subject_name(ca->cert.get())) != 1 ||
      X509_CRL_set1_lastUpdate(crl.get(), last.get()) != 1 ||
      X509_CRL_set1_nextUpdate(crl.get(), next.get()) != 1) {
    return OpenSslFailure("cannot set the CRL's version, issuer or times");
  }
  for (const RevokedEntry& entry : revoked) {
    absl::StatusOr<Asn1IntegerPtr> serial = SerialFromHex(entry.serial_hex);
    if (!serial.ok()) return serial.status();
    if (!InAsn1Range(entry.when)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "revocation time of serial ", entry.serial_hex, " out of range"));
    }
    RevokedPtr item(X509_REVOKED_new());
    Asn1TimePtr when(ASN1_TIME_set(nullptr, absl::ToTimeT(entry.when)));
    if (!item || !when ||
        X509_REVOKED_set_serialNumber(item.get(), serial->get()) != 1 ||
        X509_REVOKED_set_revocationDate(item.get(), when.get()) != 1 ||
        X509_CRL_add0_revoked(crl.get(), item.get()) != 1) {
      return OpenSslFailure("cannot add a revoked certificate");
    }
    item.release();  // the CRL owns it now
  }
  Asn1IntegerPtr crl_number(ASN1_INTEGER_new());
  if (!crl_number || ASN1_INTEGER_set_uint64(crl_number.get(), number) != 1 ||
      X509_CRL_add1_ext_i2d(crl.get(), NID_crl_number, crl_number.get(), 0,
                            X509V3_ADD_DEFAULT) != 1) {
    return OpenSslFailure("cannot add the CRL number");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, ca->cert.get(), nullptr, nullptr, crl.get(), 0);
  ExtensionPtr aki(X509V3_EXT_conf_nid(
      nullptr, &ctx, NID_authority_key_identifier, "keyid:always"));
  if (!aki || X509_CRL_add_ext(crl.get(), aki.get(), -1) != 1) {
    return OpenSslFailure("cannot add the CRL's authority key identifier");
  }
  if (X509_CRL_sort(crl.get()) != 1 ||
      X509_CRL_sign(crl.get(), ca->key.get(), EVP_sha256()) <= 0) {
    return OpenSslFailure("cannot sign the CRL");
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509_CRL(bio.get(), crl.get()) != 1) {
    return OpenSslFailure("cannot write the CRL as PEM");
  }
  return BioText(bio.get());
}

absl::StatusOr<CrlFacts> ReadCrl(const std::string& crl_pem_or_der,
                                 const std::string& ca_pem) {
  ERR_clear_error();
  CrlPtr crl;
  if (absl::StrContains(crl_pem_or_der, "-----BEGIN X509 CRL-----")) {
    BioPtr bio = ReadBio(crl_pem_or_der);
    if (!bio) return OpenSslFailure("out of memory");
    crl.reset(PEM_read_bio_X509_CRL(bio.get(), nullptr, NoPassphrase, nullptr));
  } else {
    const auto* der =
        reinterpret_cast<const unsigned char*>(crl_pem_or_der.data());
    crl.reset(
        d2i_X509_CRL(nullptr, &der, static_cast<long>(crl_pem_or_der.size())));
  }
  if (!crl) {
    return absl::DataLossError(absl::StrCat(
        "not a CRL (neither PEM \"X509 CRL\" nor DER)", DrainErrors()));
  }
  absl::StatusOr<X509StackPtr> cas = ParseCertificates(ca_pem, "CA bundle");
  if (!cas.ok()) return cas.status();

  const X509_NAME* issuer = X509_CRL_get_issuer(crl.get());
  bool signed_by_ca = false;
  for (int i = 0; i < sk_X509_num(cas->get()) && !signed_by_ca; ++i) {
    X509* ca = sk_X509_value(cas->get(), i);
    EVP_PKEY* ca_key = X509_get0_pubkey(ca);
    signed_by_ca = X509_NAME_cmp(issuer, X509_get_subject_name(ca)) == 0 &&
                   ca_key != nullptr && X509_CRL_verify(crl.get(), ca_key) == 1;
  }
  ERR_clear_error();
  if (!signed_by_ca) {
    return absl::InvalidArgumentError(
        absl::StrCat("the CRL issued by '", NameText(issuer),
                     "' is not signed by any certificate of the CA bundle"));
  }

  CrlFacts facts;
  STACK_OF(X509_REVOKED)* revoked = X509_CRL_get_REVOKED(crl.get());
  for (int i = 0; revoked != nullptr && i < sk_X509_REVOKED_num(revoked); ++i) {
    facts.revoked_serials.push_back(SerialHex(
        X509_REVOKED_get0_serialNumber(sk_X509_REVOKED_value(revoked, i))));
  }
  facts.last_update = FromAsn1Time(X509_CRL_get0_lastUpdate(crl.get()));
  const ASN1_TIME* next = X509_CRL_get0_nextUpdate(crl.get());
  facts.next_update =
      next == nullptr ? absl::InfiniteFuture() : FromAsn1Time(next);
  Asn1IntegerPtr number(static_cast<ASN1_INTEGER*>(
      X509_CRL_get_ext_d2i(crl.get(), NID_crl_number, nullptr, nullptr)));
  if (number && ASN1_INTEGER_get_uint64(&facts.number, number.get()) != 1) {
    return absl::DataLossError(
        absl::StrCat("the CRL number does not fit 64 bits", DrainErrors()));
  }
  ERR_clear_error();
  return facts;
}

}  // namespace fedberry::pki
