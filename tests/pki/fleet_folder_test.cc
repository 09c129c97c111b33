// The folder fedberry-pki keeps: init refuses to replace a CA unless forced,
// issuing writes a matching pair (key 0600) and logs it, revoking re-signs
// the CRL with the next number and marks the log.
#include "pki/fleet_folder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/pki/pki_test_util.h"
#include "tests/test_files.h"

namespace fedberry::pki::fleet_folder_test {
namespace {

using ::fedberry::testing::ModeOf;
using ::fedberry::testing::ReadText;
using ::fedberry::testing::ScopedUmask;
using ::fedberry::testing::TempDir;

const absl::Time kNow = absl::FromCivil(absl::CivilSecond(2025, 6, 1, 12, 0, 0),
                                        absl::UTCTimeZone());
constexpr absl::Duration kDay = absl::Hours(24);

class PkiFleetFolderTest : public ::testing::Test {
 protected:
  PkiFleetFolderTest() : folder_(dir_ / "fleet") {}

  void Init() {
    ASSERT_OK_AND_ASSIGN(
        CertificateFacts ca,
        folder_.Init("test fleet CA", kDay * 3650, kDay * 30, false, kNow));
    EXPECT_TRUE(ca.is_ca);
  }

  std::string Read(const std::string& file) {
    return ReadText(folder_.PathOf(file));
  }

  TempDir dir_;
  FleetFolder folder_;
};

TEST_F(PkiFleetFolderTest, InitWritesTheCaCrlAndLog) {
  ScopedUmask umask(0);  // modes are set, not left to the umask
  Init();
  EXPECT_EQ(ModeOf(folder_.PathOf(kCaKeyFile)), 0600);
  EXPECT_EQ(ModeOf(folder_.PathOf(kCaCertFile)), 0644);
  EXPECT_EQ(ModeOf(folder_.PathOf(kCrlFile)), 0644);
  EXPECT_EQ(ModeOf(folder_.PathOf(kIssueLogFile)), 0644);
  EXPECT_OK(CheckKeyMatchesCertificate(Read(kCaCertFile), Read(kCaKeyFile)));
  ASSERT_OK_AND_ASSIGN(CertificateFacts ca, ReadCertificate(Read(kCaCertFile)));
  EXPECT_EQ(ca.common_name, "test fleet CA");
  EXPECT_EQ(ca.not_before, kNow - kBackdate);
  EXPECT_EQ(ca.not_after, kNow + kDay * 3650);
  ASSERT_OK_AND_ASSIGN(CrlFacts crl, folder_.ReadCrlFacts());
  EXPECT_TRUE(crl.revoked_serials.empty());
  EXPECT_EQ(crl.number, 1u);
  EXPECT_EQ(crl.next_update, kNow + kDay * 30);
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> log, folder_.List());
  EXPECT_TRUE(log.empty());
}

TEST_F(PkiFleetFolderTest, InitRefusesToReplaceACaUnlessForced) {
  Init();
  const std::string first = Read(kCaCertFile);
  absl::StatusOr<CertificateFacts> again =
      folder_.Init("x", kDay, kDay, false, kNow);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StrContains(again.status().message(), "--force"))
      << again.status();
  EXPECT_EQ(Read(kCaCertFile), first);
  EXPECT_OK(folder_.Init("second CA", kDay, kDay, true, kNow).status());
  EXPECT_NE(Read(kCaCertFile), first);
}

TEST_F(PkiFleetFolderTest, IssueNeedsACa) {
  absl::StatusOr<IssueRecord> issued =
      folder_.Issue(Role::kBoard, "board-1", {}, kDay, false, kNow);
  EXPECT_FALSE(issued.ok());
  std::filesystem::create_directories(folder_.dir());
  issued = folder_.Issue(Role::kBoard, "board-1", {}, kDay, false, kNow);
  EXPECT_EQ(issued.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(issued.status().message(), "init"))
      << issued.status();
}

TEST_F(PkiFleetFolderTest, IssueWritesAMatchingPairAndLogsIt) {
  Init();
  ScopedUmask umask(0);
  ASSERT_OK_AND_ASSIGN(
      IssueRecord board,
      folder_.Issue(Role::kBoard, "board-1", {}, kDay * 825, false, kNow));
  EXPECT_EQ(ModeOf(folder_.PathOf("board-1.key")), 0600);
  EXPECT_EQ(ModeOf(folder_.PathOf("board-1.crt")), 0644);
  const std::string crt = Read("board-1.crt");
  EXPECT_OK(CheckKeyMatchesCertificate(crt, Read("board-1.key")));
  EXPECT_OK(VerifyCertificate(crt, Read(kCaCertFile), kNow));
  ASSERT_OK_AND_ASSIGN(CertificateFacts facts, ReadCertificate(crt));
  EXPECT_EQ(facts.dns_names, std::vector<std::string>{"board-1"});
  EXPECT_EQ(facts.not_before, kNow - kBackdate);
  EXPECT_EQ(facts.not_after, kNow + kDay * 825);

  ASSERT_OK_AND_ASSIGN(
      IssueRecord server,
      folder_.Issue(Role::kServer, "gw", {"DNS:localhost", "IP:127.0.0.1"},
                    kDay * 825, false, kNow));
  ASSERT_OK_AND_ASSIGN(facts, ReadCertificate(Read("gw.crt")));
  EXPECT_EQ(facts.ip_names, std::vector<std::string>{"127.0.0.1"});

  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> log, folder_.List());
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].name, "board-1");
  EXPECT_EQ(log[0].role, Role::kBoard);
  EXPECT_EQ(log[0].serial_hex, board.serial_hex);
  EXPECT_EQ(log[1].name, "gw");
  EXPECT_EQ(log[1].role, Role::kServer);
  EXPECT_EQ(log[1].sha256_fingerprint, facts.sha256_fingerprint);
  EXPECT_EQ(log[1].serial_hex, server.serial_hex);
  EXPECT_FALSE(log[1].revoked_at.has_value());
}

TEST_F(PkiFleetFolderTest, IssueRefusesAnExistingKeyUnlessForced) {
  Init();
  ASSERT_TRUE(folder_.Issue(Role::kBoard, "b", {}, kDay, false, kNow).ok());
  const std::string key = Read("b.key");
  absl::StatusOr<IssueRecord> again =
      folder_.Issue(Role::kBoard, "b", {}, kDay, false, kNow);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Read("b.key"), key);
  EXPECT_OK(folder_.Issue(Role::kBoard, "b", {}, kDay, true, kNow).status());
  EXPECT_NE(Read("b.key"), key);
  EXPECT_OK(CheckKeyMatchesCertificate(Read("b.crt"), Read("b.key")));
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> log, folder_.List());
  EXPECT_EQ(log.size(), 2u);
}

TEST_F(PkiFleetFolderTest, IssueRefusesBadNamesAndTheCaName) {
  Init();
  for (const std::string& name :
       std::vector<std::string>{"fleet-ca", "../evil", "", "-x"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(
        folder_.Issue(Role::kBoard, name, {}, kDay, true, kNow).status().code(),
        absl::StatusCode::kInvalidArgument);
  }
  EXPECT_OK(CheckKeyMatchesCertificate(Read(kCaCertFile), Read(kCaKeyFile)));
  EXPECT_EQ(folder_.Issue(Role::kServer, "gw", {"gateway"}, kDay, false, kNow)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> log, folder_.List());
  EXPECT_TRUE(log.empty());
}

TEST_F(PkiFleetFolderTest, CertificatesNeverOutliveTheCa) {
  ASSERT_TRUE(folder_.Init("short CA", kDay * 10, kDay, false, kNow).ok());
  ASSERT_OK_AND_ASSIGN(
      IssueRecord board,
      folder_.Issue(Role::kBoard, "b", {}, kDay * 825, false, kNow));
  EXPECT_EQ(board.not_after, kNow + kDay * 10);
  EXPECT_OK(
      VerifyCertificate(Read("b.crt"), Read(kCaCertFile), kNow + kDay * 9));
}

TEST_F(PkiFleetFolderTest, RevokeReSignsTheCrlAndMarksTheLog) {
  Init();
  ASSERT_OK_AND_ASSIGN(IssueRecord one, folder_.Issue(Role::kBoard, "board-1",
                                                      {}, kDay, false, kNow));
  ASSERT_OK_AND_ASSIGN(IssueRecord two, folder_.Issue(Role::kBoard, "board-2",
                                                      {}, kDay, false, kNow));
  ASSERT_OK_AND_ASSIGN(
      IssueRecord two_again,
      folder_.Issue(Role::kBoard, "board-2", {}, kDay, true, kNow));

  const absl::Time later = kNow + absl::Hours(5);
  ASSERT_OK_AND_ASSIGN(RevokeResult revoked,
                       folder_.Revoke("board-2", kDay * 7, later));
  EXPECT_EQ(revoked.newly_revoked.size(), 2u);
  EXPECT_EQ(revoked.already_revoked, 0);
  EXPECT_EQ(revoked.crl_number, 2u);
  ASSERT_OK_AND_ASSIGN(CrlFacts crl, folder_.ReadCrlFacts());
  EXPECT_EQ(crl.number, 2u);
  EXPECT_EQ(crl.next_update, later + kDay * 7);
  EXPECT_EQ(crl.revoked_serials.size(), 2u);
  for (const std::string& serial : {two.serial_hex, two_again.serial_hex}) {
    EXPECT_NE(std::find(crl.revoked_serials.begin(), crl.revoked_serials.end(),
                        serial),
              crl.revoked_serials.end());
  }
  EXPECT_EQ(std::find(crl.revoked_serials.begin(), crl.revoked_serials.end(),
                      one.serial_hex),
            crl.revoked_serials.end());
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> log, folder_.List());
  ASSERT_EQ(log.size(), 3u);
  EXPECT_FALSE(log[0].revoked_at.has_value());
  EXPECT_EQ(log[1].revoked_at, later);
  EXPECT_EQ(log[2].revoked_at, later);

  // Again: nothing new, but the CRL is re-signed (and the first revocation
  // time kept).
  ASSERT_OK_AND_ASSIGN(revoked, folder_.Revoke("board-2", kDay, later + kDay));
  EXPECT_TRUE(revoked.newly_revoked.empty());
  EXPECT_EQ(revoked.already_revoked, 2);
  EXPECT_EQ(revoked.crl_number, 3u);
  ASSERT_OK_AND_ASSIGN(log, folder_.List());
  EXPECT_EQ(log[1].revoked_at, later);

  ASSERT_OK_AND_ASSIGN(uint64_t number, folder_.RefreshCrl(kDay * 90, later));
  EXPECT_EQ(number, 4u);
  ASSERT_OK_AND_ASSIGN(crl, folder_.ReadCrlFacts());
  EXPECT_EQ(crl.next_update, later + kDay * 90);
  EXPECT_EQ(crl.revoked_serials.size(), 2u);
}

TEST_F(PkiFleetFolderTest, RevokingAnUnknownNameIsNotFound) {
  Init();
  absl::StatusOr<RevokeResult> revoked = folder_.Revoke("board-9", kDay, kNow);
  EXPECT_EQ(revoked.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(revoked.status().message(), "board-9"))
      << revoked.status();
  ASSERT_OK_AND_ASSIGN(CrlFacts crl, folder_.ReadCrlFacts());
  EXPECT_EQ(crl.number, 1u) << "nothing re-signed";
}

TEST_F(PkiFleetFolderTest, ACorruptLogIsReportedNotOverwritten) {
  Init();
  ::fedberry::testing::WriteText(folder_.PathOf(kIssueLogFile), "garbage\n");
  absl::StatusOr<IssueRecord> issued =
      folder_.Issue(Role::kBoard, "b", {}, kDay, false, kNow);
  EXPECT_EQ(issued.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Read(kIssueLogFile), "garbage\n");
  EXPECT_EQ(ModeOf(folder_.PathOf("b.key")), -1);
}

}  // namespace
}  // namespace fedberry::pki::fleet_folder_test
