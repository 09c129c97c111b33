// Reading and verifying: a certificate's facts, whether a key belongs to
// it, and its chain to the fleet CA at a given time.
#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "crypto/openssl_errors.h"
#include "crypto/openssl_owners.h"
#include "pki/fleet_pki.h"
#include "pki/openssl_helpers.h"

namespace fedberry::pki {
namespace {

using crypto::KeyPtr;
using crypto::OpenSslError;
using internal::FromAsn1Time;
using internal::GeneralNamesPtr;
using internal::InAsn1Range;
using internal::IsCa;
using internal::NameText;
using internal::ParseCertificates;
using internal::ParseFirstCertificate;
using internal::ParsePrivateKey;
using internal::SerialHex;
using internal::StoreCtxPtr;
using internal::StorePtr;
using internal::UtcText;
using internal::X509Ptr;
using internal::X509StackPtr;

}  // namespace

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
    return OpenSslError("cannot hash the certificate");
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
    return OpenSslError("the certificate's public key does not parse",
                        absl::StatusCode::kInvalidArgument);
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
  if (!store || !ctx) return OpenSslError("out of memory");
  for (int i = 0; i < sk_X509_num(cas->get()); ++i) {
    if (X509_STORE_add_cert(store.get(), sk_X509_value(cas->get(), i)) != 1) {
      return OpenSslError("cannot trust a CA certificate");
    }
  }
  if (X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), chain->get()) !=
      1) {
    return OpenSslError("cannot set up verification");
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

}  // namespace fedberry::pki
