#include "security/revocation_list.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>

#include "absl/time/clock.h"
#include "pki/fleet_pki.h"
#include "tests/pki/pki_test_util.h"
#include "tests/test_files.h"

namespace fedberry::security::revocation_list_test {
namespace {

PeerIdentity Peer(std::string name, std::string serial,
                  std::string fingerprint) {
  PeerIdentity peer;
  peer.authenticated = true;
  peer.name = name;
  peer.names = {name};
  peer.serial_hex = std::move(serial);
  peer.sha256_fingerprint = std::move(fingerprint);
  return peer;
}

// The DER bytes of a PEM CRL, as `openssl crl -outform DER` writes them.
std::string ToDer(const std::string& crl_pem) {
  BIO* bio = BIO_new_mem_buf(crl_pem.data(), static_cast<int>(crl_pem.size()));
  X509_CRL* crl = PEM_read_bio_X509_CRL(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  unsigned char* der = nullptr;
  const int n = crl ? i2d_X509_CRL(crl, &der) : 0;
  std::string out(reinterpret_cast<char*>(der), n > 0 ? n : 0);
  OPENSSL_free(der);
  X509_CRL_free(crl);
  return out;
}

class RevocationListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Time now = absl::Now();
    ASSERT_OK_AND_ASSIGN(ca_, pki::MakeCa("test CA", {now - absl::Hours(1),
                                                      now + absl::Hours(24)}));
  }
  fedberry::testing::TempDir dir_;
  pki::Issued ca_;
};

// Hex starts with '0' one time in 16, and '0' is the byte (0x30) a DER
// SEQUENCE starts with: such a list is still text.
TEST_F(RevocationListTest, AFingerprintStartingWithZeroIsText) {
  const std::string fingerprint(64, '0');
  const std::string other = "0f" + std::string(62, 'a');
  fedberry::testing::WriteText(dir_ / "revoked.txt",
                               fingerprint + "\nboard-9\n" + other + "\n");
  auto list = RevocationList::Open(dir_ / "revoked.txt", ca_.cert_pem);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ((*list)->size(), 3u);
  EXPECT_TRUE((*list)->Revokes(Peer("board-1", "01", fingerprint)));
  EXPECT_TRUE((*list)->Revokes(Peer("board-2", "02", other)));
  EXPECT_TRUE((*list)->Revokes(Peer("board-9", "09", "ab")));
  EXPECT_FALSE((*list)->Revokes(Peer("board-3", "03", std::string(64, 'b'))));
}

TEST_F(RevocationListTest, ACrlReadsAsPemAndAsDer) {
  const absl::Time now = absl::Now();
  for (const std::vector<pki::RevokedEntry>& revoked :
       {std::vector<pki::RevokedEntry>{},
        std::vector<pki::RevokedEntry>{{"0a1b", now}}}) {
    ASSERT_OK_AND_ASSIGN(const std::string pem,
                         pki::MakeCrl(ca_.cert_pem, ca_.key_pem, revoked, 1,
                                      now, absl::Hours(24)));
    const std::string der = ToDer(pem);
    ASSERT_FALSE(der.empty());
    for (const std::string& bytes : {pem, der}) {
      fedberry::testing::WriteText(dir_ / "revoked.crl", bytes);
      auto list = RevocationList::Open(dir_ / "revoked.crl", ca_.cert_pem);
      ASSERT_TRUE(list.ok()) << list.status();
      EXPECT_EQ((*list)->size(), revoked.size());
      EXPECT_EQ((*list)->Revokes(Peer("board-1", "0a1b", "")).has_value(),
                !revoked.empty());
    }
  }
}

TEST_F(RevocationListTest, ABrokenUpdateKeepsTheListInForce) {
  fedberry::testing::WriteText(dir_ / "revoked.txt", "board-1\n");
  auto list = RevocationList::Open(dir_ / "revoked.txt", ca_.cert_pem);
  ASSERT_TRUE(list.ok()) << list.status();
  fedberry::testing::WriteText(dir_ / "revoked.txt", "board-1\nnot a name!\n");
  const absl::Status reloaded = (*list)->Reload();
  EXPECT_TRUE(absl::IsInvalidArgument(reloaded)) << reloaded;
  EXPECT_NE(reloaded.message().find("line 2"), std::string::npos) << reloaded;
  EXPECT_TRUE((*list)->Revokes(Peer("board-1", "01", "")));
}

}  // namespace
}  // namespace fedberry::security::revocation_list_test
