// Secure aggregation's signed keys (security/secagg_keys.h over
// pki/signatures.h): a board's advertisement signed with its fleet key
// verifies against its certificate and no other; a flipped bit, another
// board's certificate, a certificate from another CA or a server's, and a
// board with none recorded are refused, naming the board.
#include "security/secagg_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "base/testing/simulated_clock.h"
#include "pki/fleet_pki.h"
#include "pki/signatures.h"
#include "tests/pki/pki_test_util.h"

namespace fedberry::security {
namespace {

using ::testing::HasSubstr;

class SecAggKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Time now = absl::Now();
    validity_ = {now - absl::Hours(1), now + absl::Hours(24)};
    ASSERT_OK_AND_ASSIGN(ca_, pki::MakeCa("fleet CA", validity_));
    ASSERT_OK_AND_ASSIGN(other_ca_, pki::MakeCa("other CA", validity_));
    ASSERT_OK_AND_ASSIGN(board_a_, Issue(ca_, pki::Role::kBoard, "board-a"));
    ASSERT_OK_AND_ASSIGN(board_b_, Issue(ca_, pki::Role::kBoard, "board-b"));
    ASSERT_OK_AND_ASSIGN(stranger_,
                         Issue(other_ca_, pki::Role::kBoard, "board-a"));
    ASSERT_OK_AND_ASSIGN(server_, Issue(ca_, pki::Role::kServer, "gateway"));
  }

  absl::StatusOr<pki::Issued> Issue(const pki::Issued& ca, pki::Role role,
                                    const std::string& name) {
    return pki::IssueCertificate(ca.cert_pem, ca.key_pem, role, name, {},
                                 validity_);
  }

  std::vector<uint8_t> Signed(const pki::Issued& who) {
    FleetKeySigner signer(who.key_pem);
    absl::StatusOr<std::vector<uint8_t>> signature = signer.Sign(kBytes);
    EXPECT_TRUE(signature.ok()) << signature.status();
    return signature.ok() ? *signature : std::vector<uint8_t>{};
  }

  const std::vector<uint8_t> kBytes = {'k', 'e', 'y', 's', 0, 1, 2, 3};
  SimulatedClock clock_{absl::Now()};
  pki::Validity validity_;
  pki::Issued ca_, other_ca_, board_a_, board_b_, stranger_, server_;
};

TEST_F(SecAggKeysTest, ASignatureVerifiesWithItsBoardsCertificateOnly) {
  CertificateKeyVerifier verifier(ca_.cert_pem, clock_);
  ASSERT_TRUE(verifier.Record(0, board_a_.cert_pem).ok());
  ASSERT_TRUE(verifier.Record(1, board_b_.cert_pem).ok());
  const std::vector<uint8_t> signature = Signed(board_a_);
  EXPECT_TRUE(verifier.Verify(0, kBytes, signature).ok());
  // Board b's certificate does not vouch for board a's key.
  absl::Status as_b = verifier.Verify(1, kBytes, signature);
  EXPECT_EQ(as_b.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(as_b.message(),
              HasSubstr("board 1's key signature does not match its "
                        "certificate"));
  std::vector<uint8_t> flipped = signature;
  flipped.back() ^= 1;
  EXPECT_EQ(verifier.Verify(0, kBytes, flipped).code(),
            absl::StatusCode::kPermissionDenied);
  std::vector<uint8_t> other_bytes = kBytes;
  other_bytes[0] = 'K';
  EXPECT_EQ(verifier.Verify(0, other_bytes, signature).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(verifier.Verify(0, kBytes, {}).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(SecAggKeysTest, ABoardWithoutACertificateIsRefused) {
  CertificateKeyVerifier verifier(ca_.cert_pem, clock_);
  absl::Status none = verifier.Verify(4, kBytes, Signed(board_a_));
  EXPECT_EQ(none.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(none.message(),
              HasSubstr("board 4's keys came without its fleet certificate"));
}

TEST_F(SecAggKeysTest, OnlyFleetBoardsCertificatesAreRecorded) {
  CertificateKeyVerifier verifier(ca_.cert_pem, clock_);
  absl::Status stranger = verifier.Record(0, stranger_.cert_pem);
  EXPECT_EQ(stranger.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(stranger.message(),
              HasSubstr("board 0's certificate is not a fleet board's"));
  EXPECT_EQ(verifier.Record(1, server_.cert_pem).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(verifier.Record(2, "not a certificate").code(),
            absl::StatusCode::kInvalidArgument);
  // One certificate per board: a second, different one is refused.
  ASSERT_TRUE(verifier.Record(3, board_a_.cert_pem).ok());
  EXPECT_TRUE(verifier.Record(3, board_a_.cert_pem).ok());
  EXPECT_EQ(verifier.Record(3, board_b_.cert_pem).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(verifier.CertificateOf(3), board_a_.cert_pem);
  EXPECT_EQ(verifier.CertificateOf(0), "");
}

TEST_F(SecAggKeysTest, AnExpiredCertificateIsRefusedAtTheClocksTime) {
  CertificateKeyVerifier verifier(ca_.cert_pem, clock_);
  clock_.Advance(absl::Hours(48));
  EXPECT_EQ(verifier.Record(0, board_a_.cert_pem).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(SecAggKeysTest, TheGatewaysVerifierTakesTheHandshakesCertificate) {
  // No CA: the TLS handshake verified the certificate already.
  CertificateKeyVerifier verifier("", clock_);
  ASSERT_TRUE(verifier.Record(0, stranger_.cert_pem).ok());
  EXPECT_TRUE(verifier.Verify(0, kBytes, Signed(stranger_)).ok());
}

TEST(Signatures, ABadKeyIsNamed) {
  absl::StatusOr<std::string> signed_bytes =
      pki::SignWithKey("not a key", "bytes");
  EXPECT_EQ(signed_bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(signed_bytes.status().message(), HasSubstr("signing key"));
}

}  // namespace
}  // namespace fedberry::security
