// issued.tsv: records round-trip through the text, comments and blank lines
// are skipped, and a damaged line is DataLoss naming the line.
#include "pki/issue_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "tests/pki/pki_test_util.h"
#include "tests/test_files.h"

namespace fedberry::pki::issue_log_test {
namespace {

using ::fedberry::testing::ModeOf;
using ::fedberry::testing::ScopedUmask;
using ::fedberry::testing::TempDir;

const std::string kSha(64, 'a');
const absl::Time kNotAfter = absl::FromCivil(
    absl::CivilSecond(2027, 9, 1, 10, 30, 0), absl::UTCTimeZone());
const absl::Time kRevoked = absl::FromCivil(
    absl::CivilSecond(2025, 6, 2, 8, 0, 5), absl::UTCTimeZone());

std::vector<IssueRecord> TwoRecords() {
  IssueRecord server{"gw", Role::kServer, "0a1b2c", kSha, kNotAfter, {}};
  IssueRecord board{"board-1", Role::kBoard, "7f", std::string(64, '0'),
                    kNotAfter, kRevoked};
  return {server, board};
}

void ExpectSame(const std::vector<IssueRecord>& a,
                const std::vector<IssueRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].role, b[i].role);
    EXPECT_EQ(a[i].serial_hex, b[i].serial_hex);
    EXPECT_EQ(a[i].sha256_fingerprint, b[i].sha256_fingerprint);
    EXPECT_EQ(a[i].not_after, b[i].not_after);
    EXPECT_EQ(a[i].revoked_at, b[i].revoked_at);
  }
}

TEST(IssueLogTest, FormatsOneTabSeparatedLinePerRecord) {
  const std::string text = FormatIssueLog(TwoRecords());
  EXPECT_TRUE(absl::StartsWith(text, "# ")) << text;
  EXPECT_TRUE(absl::StrContains(
      text, "gw\tserver\t0a1b2c\t" + kSha + "\t2027-09-01T10:30:00Z\t-\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "board-1\tboard\t7f\t" +
                                          std::string(64, '0') +
                                          "\t2027-09-01T10:30:00Z\t"
                                          "2025-06-02T08:00:05Z\n"))
      << text;
}

TEST(IssueLogTest, RoundTrips) {
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> parsed,
                       ParseIssueLog(FormatIssueLog(TwoRecords())));
  ExpectSame(parsed, TwoRecords());
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> empty,
                       ParseIssueLog(FormatIssueLog({})));
  EXPECT_TRUE(empty.empty());
}

TEST(IssueLogTest, SkipsCommentsBlankLinesAndCarriageReturns) {
  const std::string text = "# hand-edited\n\n   \nb-1\tboard\t01\t" + kSha +
                           "\t2027-09-01T10:30:00Z\t-\r\n# end\n";
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> parsed, ParseIssueLog(text));
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].name, "b-1");
  EXPECT_FALSE(parsed[0].revoked_at.has_value());
  // Offsets other than Z are read as the instant they name.
  ASSERT_OK_AND_ASSIGN(parsed,
                       ParseIssueLog("b\tboard\t01\t" + kSha +
                                     "\t2027-09-01T12:30:00+02:00\t-\n"));
  EXPECT_EQ(parsed[0].not_after, kNotAfter);
}

TEST(IssueLogTest, DamagedLinesAreDataLossNamingTheLine) {
  const std::string good = "b\tboard\t01\t" + kSha + "\t2027-09-01T10:30:00Z";
  struct Case {
    std::string line;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {good, "columns"},
           {good + "\t-\textra", "columns"},
           {"b board 01", "columns"},
           {"-b\tboard\t01\t" + kSha + "\t2027-09-01T10:30:00Z\t-", "name"},
           {"b\tlaptop\t01\t" + kSha + "\t2027-09-01T10:30:00Z\t-", "role"},
           {"b\tboard\t0A\t" + kSha + "\t2027-09-01T10:30:00Z\t-", "serial"},
           {"b\tboard\t\t" + kSha + "\t2027-09-01T10:30:00Z\t-", "serial"},
           {"b\tboard\t01\tabc\t2027-09-01T10:30:00Z\t-", "fingerprint"},
           {"b\tboard\t01\t" + kSha + "\tsoon\t-", "not_after"},
           {good + "\tyesterday", "revoked_at"},
       }) {
    SCOPED_TRACE(c.line);
    absl::StatusOr<std::vector<IssueRecord>> parsed =
        ParseIssueLog("# header\n" + c.line + "\n");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), "line 2"))
        << parsed.status();
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), c.says))
        << parsed.status();
  }
}

TEST(IssueLogTest, FileRoundTripWithMode0644) {
  TempDir dir;
  ScopedUmask umask(077);
  const std::string path = dir / "issued.tsv";
  EXPECT_EQ(ReadIssueLog(path).status().code(), absl::StatusCode::kNotFound);
  EXPECT_OK(WriteIssueLog(path, TwoRecords()));
  EXPECT_EQ(ModeOf(path), 0644);
  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> read, ReadIssueLog(path));
  ExpectSame(read, TwoRecords());

  ::fedberry::testing::WriteText(path, "broken line\n");
  absl::StatusOr<std::vector<IssueRecord>> broken = ReadIssueLog(path);
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(broken.status().message(), path))
      << broken.status();
}

}  // namespace
}  // namespace fedberry::pki::issue_log_test
