// The fleet's CRL: signing one from the revoked serials, and reading one
// back checked against the CA.
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "crypto/openssl_errors.h"
#include "crypto/openssl_owners.h"
#include "pki/fleet_pki.h"
#include "pki/openssl_helpers.h"

namespace fedberry::pki {
namespace {

using crypto::OpenSslError;
using internal::Asn1IntegerPtr;
using internal::Asn1TimePtr;
using internal::BignumPtr;
using internal::BioPtr;
using internal::BioText;
using internal::Ca;
using internal::CrlPtr;
using internal::ExtensionPtr;
using internal::FromAsn1Time;
using internal::InAsn1Range;
using internal::LoadCa;
using internal::NameText;
using internal::NoPassphrase;
using internal::ParseCertificates;
using internal::ReadBio;
using internal::RevokedPtr;
using internal::SerialHex;
using internal::X509StackPtr;

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
    return OpenSslError(absl::StrCat("serial '", hex, "' does not parse"),
                        absl::StatusCode::kInvalidArgument);
  }
  BignumPtr bn(raw);
  Asn1IntegerPtr serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
  if (!serial) return OpenSslError("out of memory");
  return serial;
}

}  // namespace

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
  if (!crl || !last || !next) return OpenSslError("out of memory");
  if (X509_CRL_set_version(crl.get(), X509_CRL_VERSION_2) != 1 ||
      X509_CRL_set_issuer_name(crl.get(),
                               X509_get_subject_name(ca->cert.get())) != 1 ||
      X509_CRL_set1_lastUpdate(crl.get(), last.get()) != 1 ||
      X509_CRL_set1_nextUpdate(crl.get(), next.get()) != 1) {
    return OpenSslError("cannot set the CRL's version, issuer or times");
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
      return OpenSslError("cannot add a revoked certificate");
    }
    item.release();  // the CRL owns it now
  }
  Asn1IntegerPtr crl_number(ASN1_INTEGER_new());
  if (!crl_number || ASN1_INTEGER_set_uint64(crl_number.get(), number) != 1 ||
      X509_CRL_add1_ext_i2d(crl.get(), NID_crl_number, crl_number.get(), 0,
                            X509V3_ADD_DEFAULT) != 1) {
    return OpenSslError("cannot add the CRL number");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, ca->cert.get(), nullptr, nullptr, crl.get(), 0);
  ExtensionPtr aki(X509V3_EXT_conf_nid(
      nullptr, &ctx, NID_authority_key_identifier, "keyid:always"));
  if (!aki || X509_CRL_add_ext(crl.get(), aki.get(), -1) != 1) {
    return OpenSslError("cannot add the CRL's authority key identifier");
  }
  if (X509_CRL_sort(crl.get()) != 1 ||
      X509_CRL_sign(crl.get(), ca->key.get(), EVP_sha256()) <= 0) {
    return OpenSslError("cannot sign the CRL");
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509_CRL(bio.get(), crl.get()) != 1) {
    return OpenSslError("cannot write the CRL as PEM");
  }
  return BioText(bio.get());
}

absl::StatusOr<CrlFacts> ReadCrl(const std::string& crl_pem_or_der,
                                 const std::string& ca_pem) {
  ERR_clear_error();
  CrlPtr crl;
  if (absl::StrContains(crl_pem_or_der, "-----BEGIN X509 CRL-----")) {
    BioPtr bio = ReadBio(crl_pem_or_der);
    if (!bio) return OpenSslError("out of memory");
    crl.reset(PEM_read_bio_X509_CRL(bio.get(), nullptr, NoPassphrase, nullptr));
  } else {
    const auto* der =
        reinterpret_cast<const unsigned char*>(crl_pem_or_der.data());
    crl.reset(
        d2i_X509_CRL(nullptr, &der, static_cast<long>(crl_pem_or_der.size())));
  }
  if (!crl) {
    return OpenSslError("not a CRL (neither PEM \"X509 CRL\" nor DER)",
                        absl::StatusCode::kDataLoss);
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
    return OpenSslError("the CRL number does not fit 64 bits",
                        absl::StatusCode::kDataLoss);
  }
  ERR_clear_error();
  return facts;
}

}  // namespace fedberry::pki
