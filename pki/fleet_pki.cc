// Issuing: the fleet CA and the certificates it signs, and the checks on
// names and subjectAltNames they carry.
#include "pki/fleet_pki.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "crypto/openssl_errors.h"
#include "crypto/openssl_owners.h"
#include "pki/openssl_helpers.h"

namespace fedberry::pki {
namespace {

using crypto::KeyPtr;
using crypto::OpenSslError;
using internal::BignumPtr;
using internal::BioPtr;
using internal::BioText;
using internal::Ca;
using internal::ExtensionPtr;
using internal::GeneralNamePtr;
using internal::GeneralNamesPtr;
using internal::InAsn1Range;
using internal::LoadCa;
using internal::UtcText;
using internal::X509Ptr;

constexpr size_t kMaxNameLength = 64;  // ub-common-name (RFC 5280)
constexpr size_t kSerialBytes = 16;

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
    return OpenSslError("cannot set a certificate time");
  }
  return absl::OkStatus();
}

absl::StatusOr<KeyPtr> NewKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("cannot generate an EC P-256 key");
  return key;
}

absl::Status SetRandomSerial(X509* cert) {
  unsigned char bytes[kSerialBytes];
  BignumPtr bn;
  do {
    if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
      return OpenSslError("no random bytes for a serial number");
    }
    bn.reset(BN_bin2bn(bytes, sizeof(bytes), nullptr));
    if (!bn) return OpenSslError("out of memory");
  } while (BN_is_zero(bn.get()));  // serials are positive (RFC 5280 4.1.2.2)
  if (BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return OpenSslError("cannot set the serial number");
  }
  return absl::OkStatus();
}

absl::Status SetCommonName(X509_NAME* name, const std::string& cn) {
  if (X509_NAME_add_entry_by_txt(
          name, "CN", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>(cn.data()),
          static_cast<int>(cn.size()), -1, 0) != 1) {
    return OpenSslError(absl::StrCat("cannot use '", cn, "' as a common name"),
                        absl::StatusCode::kInvalidArgument);
  }
  return absl::OkStatus();
}

// One extension in openssl.cnf syntax ("critical,CA:TRUE"), as the openssl
// CLI's -addext would add it.
absl::Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid,
                          const char* value) {
  ExtensionPtr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslError(
        absl::StrCat("cannot add the extension ", OBJ_nid2sn(nid), "=", value));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return OpenSslError("cannot write the certificate as PEM");
  }
  return BioText(bio.get());
}

// PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted: the file's mode protects it.
absl::StatusOr<std::string> PrivateKeyPem(EVP_PKEY* key) {
  // Secure memory (when the process set it up) and cleared on free.
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0,
                                       nullptr, nullptr) != 1) {
    return OpenSslError("cannot write the private key as PEM");
  }
  return BioText(bio.get());
}

absl::StatusOr<Issued> SignAndEncode(X509* cert, EVP_PKEY* signer,
                                     EVP_PKEY* key) {
  if (X509_sign(cert, signer, EVP_sha256()) <= 0) {
    return OpenSslError("cannot sign the certificate");
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
  if (!name) return OpenSslError("out of memory");
  if (absl::StartsWithIgnoreCase(san, "DNS:")) {
    const absl::string_view host = san.substr(4);
    ASN1_IA5STRING* ia5 = ASN1_IA5STRING_new();
    if (ia5 == nullptr ||
        ASN1_STRING_set(ia5, host.data(), static_cast<int>(host.size())) != 1) {
      ASN1_IA5STRING_free(ia5);
      return OpenSslError("out of memory");
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
      return OpenSslError("out of memory");
    }
    GENERAL_NAME_set0_value(name.get(), GEN_IPADD, ip);
  }
  return name;
}

absl::Status AddSubjectAltNames(X509* cert,
                                const std::vector<std::string>& sans) {
  GeneralNamesPtr names(GENERAL_NAMES_new());
  if (!names) return OpenSslError("out of memory");
  for (const std::string& san : sans) {
    absl::StatusOr<GeneralNamePtr> name = ToGeneralName(san);
    if (!name.ok()) return name.status();
    if (sk_GENERAL_NAME_push(names.get(), name->get()) <= 0) {
      return OpenSslError("out of memory");
    }
    name->release();
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0,
                        X509V3_ADD_DEFAULT) != 1) {
    return OpenSslError("cannot add subjectAltName");
  }
  return absl::OkStatus();
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
  if (!cert) return OpenSslError("out of memory");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return OpenSslError("cannot set the version");
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
    return OpenSslError("cannot set the issuer or public key");
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

}  // namespace fedberry::pki
