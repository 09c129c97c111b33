// The fleet PKI on OpenSSL: the CA and leaves carry the promised
// extensions, verify (or fail to, with OpenSSL's reason) at a given time,
// CRLs round-trip and are refused from another CA; and the Debian openssl
// CLI agrees with all of it.
#include "pki/fleet_pki.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/pki/pki_test_util.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::pki::fleet_pki_test {
namespace {

using ::fedberry::testing::ReadText;
using ::fedberry::testing::RunCommand;
using ::fedberry::testing::TempDir;
using ::fedberry::testing::WriteText;

const absl::Time kNow = absl::FromCivil(absl::CivilSecond(2025, 6, 1, 12, 0, 0),
                                        absl::UTCTimeZone());
constexpr absl::Duration kDay = absl::Hours(24);

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
struct CrlFree {
  void operator()(X509_CRL* c) const { X509_CRL_free(c); }
};
using CrlPtr = std::unique_ptr<X509_CRL, CrlFree>;

// Parsed independently of the code under test.
X509Ptr Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509Ptr x(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return x;
}

CrlPtr ParseCrl(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  CrlPtr crl(PEM_read_bio_X509_CRL(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return crl;
}

std::string Der(X509* x) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(x, &der);
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return out;
}

std::string Sha256Hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<char*>(md), n));
}

bool ExtensionIsCritical(X509* x, int nid) {
  const int index = X509_get_ext_by_NID(x, nid, -1);
  return index >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, index));
}

class FleetPkiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(ca_, MakeCa("test fleet CA", Around(kNow, 3650)));
    ASSERT_OK_AND_ASSIGN(other_ca_, MakeCa("other CA", Around(kNow, 3650)));
  }

  static Validity Around(absl::Time t, int days) {
    return {t - absl::Hours(1), t + kDay * days};
  }

  absl::StatusOr<Issued> Board(const std::string& name,
                               Validity validity = Around(kNow, 825)) {
    return IssueCertificate(ca_.cert_pem, ca_.key_pem, Role::kBoard, name, {},
                            validity);
  }

  Issued ca_;
  Issued other_ca_;
};

TEST_F(FleetPkiTest, CaCarriesTheCaExtensions) {
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts, ReadCertificate(ca_.cert_pem));
  EXPECT_EQ(facts.common_name, "test fleet CA");
  EXPECT_EQ(facts.issuer, "CN=test fleet CA");
  EXPECT_TRUE(facts.is_ca);
  EXPECT_EQ(facts.not_before, kNow - absl::Hours(1));
  EXPECT_EQ(facts.not_after, kNow + kDay * 3650);
  EXPECT_TRUE(absl::StartsWith(ca_.key_pem, "-----BEGIN PRIVATE KEY-----"))
      << "PKCS#8";

  X509Ptr x = Parse(ca_.cert_pem);
  ASSERT_TRUE(x);
  EXPECT_EQ(X509_get_version(x.get()), X509_VERSION_3);
  EXPECT_TRUE(ExtensionIsCritical(x.get(), NID_basic_constraints));
  EXPECT_EQ(X509_get_pathlen(x.get()), 0);
  EXPECT_TRUE(ExtensionIsCritical(x.get(), NID_key_usage));
  EXPECT_EQ(X509_get_key_usage(x.get()), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
  EXPECT_NE(X509_get0_subject_key_id(x.get()), nullptr);
  EXPECT_EQ(X509_get_signature_nid(x.get()), NID_ecdsa_with_SHA256);
  char group[64] = {};
  EXPECT_EQ(EVP_PKEY_get_group_name(X509_get0_pubkey(x.get()), group,
                                    sizeof(group), nullptr),
            1);
  EXPECT_STREQ(group, "prime256v1");
  // Self-signed.
  EXPECT_EQ(X509_verify(x.get(), X509_get0_pubkey(x.get())), 1);
  EXPECT_OK(VerifyCertificate(ca_.cert_pem, ca_.cert_pem, kNow));
}

TEST_F(FleetPkiTest, SerialsAreRandomPositiveAndUpTo128Bits) {
  ASSERT_OK_AND_ASSIGN(Issued a, Board("board-1"));
  ASSERT_OK_AND_ASSIGN(Issued b, Board("board-1"));
  X509Ptr xa = Parse(a.cert_pem), xb = Parse(b.cert_pem);
  ASSERT_TRUE(xa && xb);
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(xa.get()), nullptr);
  EXPECT_FALSE(BN_is_negative(bn));
  EXPECT_LE(BN_num_bits(bn), 128);
  EXPECT_GT(BN_num_bits(bn), 64);  // fails once in 2^64 runs
  BN_free(bn);
  EXPECT_NE(ASN1_INTEGER_cmp(X509_get0_serialNumber(xa.get()),
                             X509_get0_serialNumber(xb.get())),
            0);
}

TEST_F(FleetPkiTest, BoardFactsAreRight) {
  ASSERT_OK_AND_ASSIGN(Issued board, Board("board-1"));
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts, ReadCertificate(board.cert_pem));
  X509Ptr x = Parse(board.cert_pem);
  ASSERT_TRUE(x);

  EXPECT_EQ(facts.common_name, "board-1");
  EXPECT_EQ(facts.dns_names, std::vector<std::string>{"board-1"});
  EXPECT_TRUE(facts.ip_names.empty());
  EXPECT_FALSE(facts.is_ca);
  EXPECT_EQ(facts.issuer, "CN=test fleet CA");
  EXPECT_EQ(facts.not_before, kNow - absl::Hours(1));
  EXPECT_EQ(facts.not_after, kNow + kDay * 825);

  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x.get()), nullptr);
  char* hex = BN_bn2hex(bn);
  EXPECT_EQ(facts.serial_hex, absl::AsciiStrToLower(hex));
  OPENSSL_free(hex);
  BN_free(bn);

  EXPECT_EQ(facts.sha256_fingerprint, Sha256Hex(Der(x.get())));
  EXPECT_EQ(facts.sha256_fingerprint.size(), 64u);
}

TEST_F(FleetPkiTest, ServerFactsListEveryAltName) {
  ASSERT_OK_AND_ASSIGN(
      Issued server,
      IssueCertificate(
          ca_.cert_pem, ca_.key_pem, Role::kServer, "gateway",
          {"DNS:gateway.local", "IP:10.0.0.1", "ip:::1", "DNS:localhost"},
          Around(kNow, 825)));
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts,
                       ReadCertificate(server.cert_pem));
  EXPECT_EQ(facts.common_name, "gateway");
  EXPECT_EQ(facts.dns_names,
            (std::vector<std::string>{"gateway.local", "localhost"}));
  EXPECT_EQ(facts.ip_names, (std::vector<std::string>{"10.0.0.1", "::1"}));

  X509Ptr x = Parse(server.cert_pem);
  ASSERT_TRUE(x);
  EXPECT_EQ(X509_check_ip_asc(x.get(), "10.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(x.get(), "gateway.local", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_host(x.get(), "gateway", 0, 0, nullptr), 1)
      << "the CN is not a host name once there are SANs";
}

TEST_F(FleetPkiTest, ExtendedKeyUsageFollowsTheRole) {
  ASSERT_OK_AND_ASSIGN(Issued board, Board("board-1"));
  ASSERT_OK_AND_ASSIGN(
      Issued server, IssueCertificate(ca_.cert_pem, ca_.key_pem, Role::kServer,
                                      "gw", {}, Around(kNow, 825)));
  X509Ptr b = Parse(board.cert_pem), s = Parse(server.cert_pem);
  ASSERT_TRUE(b && s);
  EXPECT_EQ(X509_check_purpose(b.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  EXPECT_EQ(X509_check_purpose(b.get(), X509_PURPOSE_SSL_SERVER, 0), 0);
  EXPECT_EQ(X509_check_purpose(s.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
  EXPECT_EQ(X509_check_purpose(s.get(), X509_PURPOSE_SSL_CLIENT, 0), 0);
  EXPECT_EQ(X509_get_extended_key_usage(b.get()), XKU_SSL_CLIENT);
  EXPECT_EQ(X509_get_extended_key_usage(s.get()), XKU_SSL_SERVER);
  for (X509* leaf : {b.get(), s.get()}) {
    EXPECT_TRUE(ExtensionIsCritical(leaf, NID_key_usage));
    EXPECT_EQ(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
    EXPECT_EQ(X509_get_pathlen(leaf), -1);
    EXPECT_NE(X509_get0_subject_key_id(leaf), nullptr);
  }
  // The authority key identifier is the CA's subject key identifier.
  X509Ptr ca = Parse(ca_.cert_pem);
  ASSERT_TRUE(ca);
  ASSERT_NE(X509_get0_authority_key_id(b.get()), nullptr);
  EXPECT_EQ(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(b.get()),
                                  X509_get0_subject_key_id(ca.get())),
            0);
}

TEST_F(FleetPkiTest, BoardVerifiesAgainstItsCa) {
  ASSERT_OK_AND_ASSIGN(Issued board, Board("board-1"));
  EXPECT_OK(VerifyCertificate(board.cert_pem, ca_.cert_pem, kNow));
  // A bundle of several CAs: any of them may be the issuer.
  EXPECT_OK(VerifyCertificate(board.cert_pem, other_ca_.cert_pem + ca_.cert_pem,
                              kNow));
  EXPECT_OK(CheckKeyMatchesCertificate(board.cert_pem, board.key_pem));
}

TEST_F(FleetPkiTest, BoardFailsAgainstAnotherCa) {
  ASSERT_OK_AND_ASSIGN(Issued board, Board("board-1"));
  absl::Status s = VerifyCertificate(board.cert_pem, other_ca_.cert_pem, kNow);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(s.message(), "unable to get local issuer certificate"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "board-1")) << s;
}

TEST_F(FleetPkiTest, ExpiredBoardFails) {
  ASSERT_OK_AND_ASSIGN(Issued board,
                       Board("board-1", {kNow - kDay * 10, kNow - kDay}));
  absl::Status s = VerifyCertificate(board.cert_pem, ca_.cert_pem, kNow);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "expired")) << s;
  // A certificate like it was fine while it was valid (under a CA that was
  // valid then too).
  ASSERT_OK_AND_ASSIGN(Issued old_ca,
                       MakeCa("old CA", {kNow - kDay * 30, kNow + kDay}));
  ASSERT_OK_AND_ASSIGN(
      Issued old_board,
      IssueCertificate(old_ca.cert_pem, old_ca.key_pem, Role::kBoard, "b", {},
                       {kNow - kDay * 10, kNow - kDay}));
  EXPECT_OK(
      VerifyCertificate(old_board.cert_pem, old_ca.cert_pem, kNow - kDay * 5));
  EXPECT_TRUE(absl::StrContains(
      VerifyCertificate(old_board.cert_pem, old_ca.cert_pem, kNow).message(),
      "certificate has expired"));
}

TEST_F(FleetPkiTest, NotYetValidBoardFails) {
  ASSERT_OK_AND_ASSIGN(Issued board,
                       Board("board-1", {kNow + kDay, kNow + kDay * 10}));
  absl::Status s = VerifyCertificate(board.cert_pem, ca_.cert_pem, kNow);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "not yet valid")) << s;
}

TEST_F(FleetPkiTest, ExpiredCaFailsItsBoards) {
  ASSERT_OK_AND_ASSIGN(Issued board, Board("board-1"));
  absl::Status s =
      VerifyCertificate(board.cert_pem, ca_.cert_pem, kNow + kDay * 4000);
  EXPECT_TRUE(absl::StrContains(s.message(), "expired")) << s;
}

TEST_F(FleetPkiTest, KeyMismatchIsCaught) {
  ASSERT_OK_AND_ASSIGN(Issued one, Board("board-1"));
  ASSERT_OK_AND_ASSIGN(Issued two, Board("board-2"));
  absl::Status s = CheckKeyMatchesCertificate(one.cert_pem, two.key_pem);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "does not belong")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "board-1")) << s;

  EXPECT_EQ(CheckKeyMatchesCertificate(one.cert_pem, "not a key").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckKeyMatchesCertificate("not a cert", one.key_pem).code(),
            absl::StatusCode::kInvalidArgument);
  // A certificate's PEM is no key.
  EXPECT_EQ(CheckKeyMatchesCertificate(one.cert_pem, one.cert_pem).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetPkiTest, CaCertificateAndKeyMustMatchAndBeACa) {
  absl::StatusOr<Issued> mixed = IssueCertificate(
      ca_.cert_pem, other_ca_.key_pem, Role::kBoard, "b", {}, Around(kNow, 1));
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(mixed.status().message(), "not the key"))
      << mixed.status();

  ASSERT_OK_AND_ASSIGN(Issued leaf, Board("board-1"));
  absl::StatusOr<Issued> from_leaf = IssueCertificate(
      leaf.cert_pem, leaf.key_pem, Role::kBoard, "b", {}, Around(kNow, 1));
  EXPECT_EQ(from_leaf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(from_leaf.status().message(), "not a CA"))
      << from_leaf.status();

  EXPECT_EQ(IssueCertificate("garbage", ca_.key_pem, Role::kBoard, "b", {},
                             Around(kNow, 1))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetPkiTest, BadNamesAreRefused) {
  for (const std::string& name : std::vector<std::string>{
           "", "-board", ".board", "a/b", "../x", "a b", "board\t1", "bo,ard",
           "b\xc3\xa9", "name=x", std::string(65, 'a')}) {
    SCOPED_TRACE(absl::CHexEscape(name));
    EXPECT_EQ(CheckName(name).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(Board(name).status().code(), absl::StatusCode::kInvalidArgument);
  }
  for (const std::string& name : std::vector<std::string>{
           "a", "board-1", "Board_7.lab", "0", std::string(64, 'z')}) {
    SCOPED_TRACE(name);
    EXPECT_OK(CheckName(name));
  }
}

TEST_F(FleetPkiTest, BadAltNamesAreRefused) {
  for (const std::string& san :
       std::vector<std::string>{"",
                                "gateway",
                                "DNS:",
                                "DNS:a..b",
                                "DNS:.a",
                                "DNS:a.",
                                "DNS:-a",
                                "DNS:a-",
                                "DNS:a_b",
                                "DNS:*.local",
                                "DNS:a,IP:1.2.3.4",
                                "DNS:a b",
                                "IP:",
                                "IP:1.2.3",
                                "IP:300.1.1.1",
                                "IP:host",
                                "IP:1.2.3.4/24",
                                "URI:https://x",
                                "email:a@b",
                                "DNS:" + std::string(64, 'a')}) {
    SCOPED_TRACE(san);
    EXPECT_EQ(CheckSubjectAltName(san).code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(IssueCertificate(ca_.cert_pem, ca_.key_pem, Role::kServer, "gw",
                               {san}, Around(kNow, 1))
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument);
  }
  for (const std::string& san :
       std::vector<std::string>{"DNS:localhost", "dns:gateway.local",
                                "DNS:a-b.c-d.example", "IP:127.0.0.1", "IP:::1",
                                "IP:fe80::1", "DNS:" + std::string(63, 'a')}) {
    SCOPED_TRACE(san);
    EXPECT_OK(CheckSubjectAltName(san));
  }
}

TEST_F(FleetPkiTest, BadValiditiesAreRefused) {
  EXPECT_EQ(Board("b", {kNow, kNow}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Board("b", {kNow, kNow - kDay}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCa("ca", {absl::InfinitePast(), kNow}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCa("", Around(kNow, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCa("a\nb", Around(kNow, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Years past 2049 are GeneralizedTime, and still read back.
  ASSERT_OK_AND_ASSIGN(Issued ca, MakeCa("long CA", Around(kNow, 36500)));
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts, ReadCertificate(ca.cert_pem));
  EXPECT_EQ(facts.not_after, kNow + kDay * 36500);
}

TEST_F(FleetPkiTest, ReadCertificateRefusesGarbage) {
  EXPECT_EQ(ReadCertificate("").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadCertificate("-----BEGIN CERTIFICATE-----\nAAAA\n"
                            "-----END CERTIFICATE-----\n")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // The first of a chain.
  ASSERT_OK_AND_ASSIGN(Issued board, Board("board-1"));
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts,
                       ReadCertificate(board.cert_pem + ca_.cert_pem));
  EXPECT_EQ(facts.common_name, "board-1");
}

TEST_F(FleetPkiTest, CrlRoundTrip) {
  ASSERT_OK_AND_ASSIGN(Issued one, Board("board-1"));
  ASSERT_OK_AND_ASSIGN(Issued two, Board("board-2"));
  ASSERT_OK_AND_ASSIGN(CertificateFacts one_facts,
                       ReadCertificate(one.cert_pem));
  ASSERT_OK_AND_ASSIGN(CertificateFacts two_facts,
                       ReadCertificate(two.cert_pem));
  ASSERT_OK_AND_ASSIGN(
      std::string crl,
      MakeCrl(ca_.cert_pem, ca_.key_pem, {{two_facts.serial_hex, kNow - kDay}},
              7, kNow, kDay * 30));
  EXPECT_TRUE(absl::StartsWith(crl, "-----BEGIN X509 CRL-----"));

  ASSERT_OK_AND_ASSIGN(CrlFacts facts, ReadCrl(crl, ca_.cert_pem));
  EXPECT_EQ(facts.revoked_serials,
            std::vector<std::string>{two_facts.serial_hex});
  EXPECT_EQ(facts.next_update, kNow + kDay * 30);
  EXPECT_EQ(facts.last_update, kNow);
  EXPECT_EQ(facts.number, 7u);

  // Version 2, the revocation date kept, and OpenSSL's own CRL check
  // refuses board-2 and keeps board-1.
  CrlPtr parsed = ParseCrl(crl);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(X509_CRL_get_version(parsed.get()), X509_CRL_VERSION_2);
  X509_REVOKED* entry =
      sk_X509_REVOKED_value(X509_CRL_get_REVOKED(parsed.get()), 0);
  ASSERT_NE(entry, nullptr);
  int day = 0, sec = 0;
  ASN1_TIME* expected = ASN1_TIME_set(nullptr, absl::ToTimeT(kNow - kDay));
  ASSERT_EQ(ASN1_TIME_diff(&day, &sec, expected,
                           X509_REVOKED_get0_revocationDate(entry)),
            1);
  ASN1_TIME_free(expected);
  EXPECT_EQ(day, 0);
  EXPECT_EQ(sec, 0);

  X509Ptr ca = Parse(ca_.cert_pem);
  for (const auto& [leaf, revoked] :
       {std::pair{&one, false}, std::pair{&two, true}}) {
    X509Ptr x = Parse(leaf->cert_pem);
    X509_STORE* store = X509_STORE_new();
    X509_STORE_add_cert(store, ca.get());
    X509_STORE_add_crl(store, parsed.get());
    X509_STORE_CTX* ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, x.get(), nullptr);
    X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_CRL_CHECK);
    X509_VERIFY_PARAM_set_time(param, absl::ToTimeT(kNow));
    EXPECT_EQ(X509_verify_cert(ctx), revoked ? 0 : 1);
    if (revoked) {
      EXPECT_EQ(X509_STORE_CTX_get_error(ctx), X509_V_ERR_CERT_REVOKED);
    }
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
  }
}

TEST_F(FleetPkiTest, CrlReadsAsDerToo) {
  ASSERT_OK_AND_ASSIGN(
      std::string crl,
      MakeCrl(ca_.cert_pem, ca_.key_pem, {{"0a1b", kNow}, {"FF00", kNow}}, 1,
              kNow, kDay));
  CrlPtr parsed = ParseCrl(crl);
  ASSERT_TRUE(parsed);
  unsigned char* der = nullptr;
  const int n = i2d_X509_CRL(parsed.get(), &der);
  const std::string der_text(reinterpret_cast<char*>(der),
                             static_cast<size_t>(n));
  OPENSSL_free(der);
  ASSERT_OK_AND_ASSIGN(CrlFacts facts, ReadCrl(der_text, ca_.cert_pem));
  // Sorted by serial, in CertificateFacts' spelling.
  EXPECT_EQ(facts.revoked_serials, (std::vector<std::string>{"0a1b", "ff00"}));
}

TEST_F(FleetPkiTest, CrlFromAnotherCaIsRefused) {
  ASSERT_OK_AND_ASSIGN(
      std::string crl,
      MakeCrl(other_ca_.cert_pem, other_ca_.key_pem, {}, 1, kNow, kDay));
  absl::StatusOr<CrlFacts> facts = ReadCrl(crl, ca_.cert_pem);
  EXPECT_EQ(facts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(facts.status().message(), "not signed"))
      << facts.status();
  // Found in a bundle that holds its CA.
  EXPECT_OK(ReadCrl(crl, ca_.cert_pem + other_ca_.cert_pem).status());

  // Another CA under the same name does not pass either.
  ASSERT_OK_AND_ASSIGN(Issued impostor,
                       MakeCa("test fleet CA", Around(kNow, 10)));
  ASSERT_OK_AND_ASSIGN(
      std::string forged,
      MakeCrl(impostor.cert_pem, impostor.key_pem, {}, 1, kNow, kDay));
  EXPECT_EQ(ReadCrl(forged, ca_.cert_pem).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetPkiTest, CrlGarbageIsDataLoss) {
  EXPECT_EQ(ReadCrl("", ca_.cert_pem).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadCrl("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n",
                    ca_.cert_pem)
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  ASSERT_OK_AND_ASSIGN(std::string crl,
                       MakeCrl(ca_.cert_pem, ca_.key_pem, {}, 1, kNow, kDay));
  EXPECT_EQ(ReadCrl(crl, "no CA here").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetPkiTest, MakeCrlRefusesBadInput) {
  for (const std::string& serial :
       std::vector<std::string>{"", "xyz", "12 34", std::string(41, '1')}) {
    SCOPED_TRACE(serial);
    EXPECT_EQ(
        MakeCrl(ca_.cert_pem, ca_.key_pem, {{serial, kNow}}, 1, kNow, kDay)
            .status()
            .code(),
        absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(
      MakeCrl(ca_.cert_pem, ca_.key_pem, {}, 1, kNow, absl::ZeroDuration())
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCrl(ca_.cert_pem, other_ca_.key_pem, {}, 1, kNow, kDay)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// The Debian openssl CLI reads what we write and we read what it writes.
class FleetPkiInteropTest : public FleetPkiTest {
 protected:
  void SetUp() override {
    if (access("/usr/bin/openssl", X_OK) != 0) {
      GTEST_SKIP() << "no /usr/bin/openssl (Debian's openssl package)";
    }
    FleetPkiTest::SetUp();
  }

  // Runs openssl with `args` in the temporary folder.
  std::string OpenSsl(const std::string& args, int* code) {
    return RunCommand(
        absl::StrCat("cd '", dir_.path(), "' && /usr/bin/openssl ", args,
                     " </dev/null"),
        code);
  }

  TempDir dir_;
};

TEST_F(FleetPkiInteropTest, OpensslVerifyAcceptsOurCertificates) {
  const absl::Time now = absl::Now();
  ASSERT_OK_AND_ASSIGN(Issued ca, MakeCa("interop CA", Around(now, 10)));
  ASSERT_OK_AND_ASSIGN(Issued board,
                       IssueCertificate(ca.cert_pem, ca.key_pem, Role::kBoard,
                                        "board-1", {}, Around(now, 10)));
  ASSERT_OK_AND_ASSIGN(
      Issued server,
      IssueCertificate(ca.cert_pem, ca.key_pem, Role::kServer, "gw",
                       {"DNS:localhost", "IP:127.0.0.1"}, Around(now, 10)));
  ASSERT_OK_AND_ASSIGN(Issued other,
                       MakeCa("not the interop CA", Around(now, 10)));
  WriteText(dir_ / "ca.crt", ca.cert_pem);
  WriteText(dir_ / "other.crt", other.cert_pem);
  WriteText(dir_ / "board.crt", board.cert_pem);
  WriteText(dir_ / "board.key", board.key_pem);
  WriteText(dir_ / "server.crt", server.cert_pem);

  int code = -1;
  std::string out = OpenSsl("verify -CAfile ca.crt board.crt", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "board.crt: OK")) << out;
  out = OpenSsl("verify -CAfile ca.crt -purpose sslclient board.crt", &code);
  EXPECT_EQ(code, 0) << out;
  out = OpenSsl("verify -CAfile ca.crt -purpose sslserver board.crt", &code);
  EXPECT_NE(code, 0) << out;
  out = OpenSsl(
      "verify -CAfile ca.crt -purpose sslserver -verify_ip 127.0.0.1 "
      "server.crt",
      &code);
  EXPECT_EQ(code, 0) << out;
  out = OpenSsl("verify -x509_strict -CAfile ca.crt server.crt", &code);
  EXPECT_EQ(code, 0) << out;
  out = OpenSsl("verify -CAfile other.crt board.crt", &code);
  EXPECT_NE(code, 0) << out;

  // The key is PKCS#8 and the pair matches by openssl's own reading.
  out = OpenSsl("pkey -in board.key -pubout", &code);
  EXPECT_EQ(code, 0) << out;
  std::string from_cert = OpenSsl("x509 -in board.crt -noout -pubkey", &code);
  EXPECT_EQ(code, 0) << from_cert;
  EXPECT_EQ(out, from_cert);

  // Serial and fingerprint as openssl prints them.
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts, ReadCertificate(board.cert_pem));
  out =
      OpenSsl("x509 -in board.crt -noout -serial -fingerprint -sha256", &code);
  EXPECT_EQ(code, 0) << out;
  const std::string flat =
      absl::AsciiStrToLower(absl::StrReplaceAll(out, {{":", ""}}));
  EXPECT_TRUE(absl::StrContains(flat, "serial=" + facts.serial_hex)) << out;
  EXPECT_TRUE(
      absl::StrContains(flat, "fingerprint=" + facts.sha256_fingerprint))
      << out;
}

TEST_F(FleetPkiInteropTest, OpensslHonoursOurCrl) {
  const absl::Time now = absl::Now();
  ASSERT_OK_AND_ASSIGN(Issued ca, MakeCa("interop CA", Around(now, 10)));
  ASSERT_OK_AND_ASSIGN(Issued one,
                       IssueCertificate(ca.cert_pem, ca.key_pem, Role::kBoard,
                                        "board-1", {}, Around(now, 10)));
  ASSERT_OK_AND_ASSIGN(Issued two,
                       IssueCertificate(ca.cert_pem, ca.key_pem, Role::kBoard,
                                        "board-2", {}, Around(now, 10)));
  ASSERT_OK_AND_ASSIGN(CertificateFacts two_facts,
                       ReadCertificate(two.cert_pem));
  ASSERT_OK_AND_ASSIGN(std::string crl,
                       MakeCrl(ca.cert_pem, ca.key_pem,
                               {{two_facts.serial_hex, now}}, 3, now, kDay));
  WriteText(dir_ / "ca.crt", ca.cert_pem);
  WriteText(dir_ / "one.crt", one.cert_pem);
  WriteText(dir_ / "two.crt", two.cert_pem);
  WriteText(dir_ / "revoked.crl", crl);

  int code = -1;
  std::string out = OpenSsl("crl -in revoked.crl -CAfile ca.crt -noout", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "verify OK")) << out;
  out = OpenSsl("crl -in revoked.crl -noout -crlnumber", &code);
  EXPECT_TRUE(absl::StrContains(out, "crlNumber=0x03")) << out;
  out = OpenSsl("verify -crl_check -CRLfile revoked.crl -CAfile ca.crt one.crt",
                &code);
  EXPECT_EQ(code, 0) << out;
  out = OpenSsl("verify -crl_check -CRLfile revoked.crl -CAfile ca.crt two.crt",
                &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "certificate revoked")) << out;
}

TEST_F(FleetPkiInteropTest, WeReadWhatOpensslMakes) {
  int code = -1;
  std::string out = OpenSsl(
      "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-keyout cli.key -out cli.crt -subj /CN=cli-made -days 2 "
      "-addext subjectAltName=DNS:cli-made,IP:192.0.2.7",
      &code);
  ASSERT_EQ(code, 0) << out;
  const std::string cert = ReadText(dir_ / "cli.crt");
  const std::string key = ReadText(dir_ / "cli.key");
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts, ReadCertificate(cert));
  EXPECT_EQ(facts.common_name, "cli-made");
  EXPECT_EQ(facts.dns_names, std::vector<std::string>{"cli-made"});
  EXPECT_EQ(facts.ip_names, std::vector<std::string>{"192.0.2.7"});
  EXPECT_EQ(facts.issuer, "CN=cli-made");
  EXPECT_NEAR(absl::ToDoubleHours(facts.not_after - facts.not_before), 48, 1);
  EXPECT_OK(CheckKeyMatchesCertificate(cert, key));
  ASSERT_OK_AND_ASSIGN(Issued ours, Board("board-1"));
  EXPECT_EQ(CheckKeyMatchesCertificate(cert, ours.key_pem).code(),
            absl::StatusCode::kInvalidArgument);

  out = OpenSsl("x509 -in cli.crt -noout -fingerprint -sha256", &code);
  EXPECT_TRUE(absl::StrContains(
      absl::AsciiStrToLower(absl::StrReplaceAll(out, {{":", ""}})),
      facts.sha256_fingerprint))
      << out;

  // The traditional "EC PRIVATE KEY" form reads too; an encrypted key is
  // refused without a prompt.
  out = OpenSsl("ec -in cli.key -out cli-traditional.key", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_OK(
      CheckKeyMatchesCertificate(cert, ReadText(dir_ / "cli-traditional.key")));
  out = OpenSsl(
      "pkey -in cli.key -aes256 -passout pass:secret -out cli-encrypted.key",
      &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(
      CheckKeyMatchesCertificate(cert, ReadText(dir_ / "cli-encrypted.key"))
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedberry::pki::fleet_pki_test
