#include "client/clock_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file_system.h"
#include "base/testing/simulated_clock.h"
#include "base/version.h"
#include "pki/fleet_pki.h"

namespace fedberry::client::clock_check_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// 2026-11-01 00:00:00 UTC, when the test's certificates become valid.
const absl::Time kIssued = absl::FromUnixSeconds(1793491200);

// A 1970 clock (where a Raspberry Pi without NTP may start) that NTP sets
// to `set_to` during the `ntp_after`-th of its sleeps; it counts them.
class NtpLaterClock : public SimulatedClock {
 public:
  NtpLaterClock(int ntp_after, absl::Time set_to)
      : SimulatedClock(absl::UnixEpoch() + absl::Hours(24)),
        ntp_after_(ntp_after),
        set_to_(set_to) {}
  void SleepFor(absl::Duration d) override {
    SimulatedClock::SleepFor(d);
    if (++sleeps_ == ntp_after_) Advance(set_to_ - Now());
  }
  int sleeps() const { return sleeps_; }

 private:
  const int ntp_after_;
  const absl::Time set_to_;
  int sleeps_ = 0;
};

// A fresh folder with a CA certificate and a board certificate valid from
// kIssued.
class ClockCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/fedberry-clock-check-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    const pki::Validity validity{kIssued, kIssued + absl::Hours(24 * 365)};
    absl::StatusOr<pki::Issued> ca = pki::MakeCa("fleet-ca", validity);
    ASSERT_TRUE(ca.ok()) << ca.status();
    absl::StatusOr<pki::Issued> board = pki::IssueCertificate(
        ca->cert_pem, ca->key_pem, pki::Role::kBoard, "pi-1", {}, validity);
    ASSERT_TRUE(board.ok()) << board.status();
    ca_path_ = dir_ + "/fleet-ca.crt";
    board_path_ = dir_ + "/board.crt";
    std::ofstream(ca_path_) << ca->cert_pem;
    std::ofstream(board_path_) << board->cert_pem;
  }
  void TearDown() override {
    (void)base::FileSystem::Default().RemoveAll(dir_);
  }

  ClockFloor BoardFloor() {
    return EarliestPlausibleTime(kIssued - absl::Hours(24 * 30),
                                 {board_path_, ca_path_},
                                 base::FileSystem::Default());
  }

  std::string dir_, ca_path_, board_path_;
};

TEST_F(ClockCheck, TheFloorIsTheLatestOfTheBuildAndTheCertificates) {
  const ClockFloor floor = BoardFloor();
  EXPECT_EQ(floor.at, kIssued);
  EXPECT_EQ(floor.source, "the notBefore of " + board_path_);
  // A build newer than the certificates sets it; missing or unreadable
  // files (the transport reports them) and empty paths are skipped.
  const absl::Time later = kIssued + absl::Hours(1);
  std::ofstream(dir_ + "/not-pem.crt") << "not a certificate";
  const ClockFloor built = EarliestPlausibleTime(
      later, {board_path_, "", dir_ + "/absent.crt", dir_ + "/not-pem.crt"},
      base::FileSystem::Default());
  EXPECT_EQ(built.at, later);
  EXPECT_EQ(built.source, "this build's date");
}

TEST_F(ClockCheck, SaysTheClockIsWrongInWords) {
  const absl::Status wrong =
      CheckClock(absl::UnixEpoch() + absl::Seconds(86405), BoardFloor());
  EXPECT_TRUE(absl::IsFailedPrecondition(wrong)) << wrong;
  EXPECT_THAT(std::string(wrong.message()),
              StartsWith("the clock is 1970-01-02 00:00:05 UTC; waiting for "
                         "NTP (systemd-timesyncd): it is before the "
                         "notBefore of " +
                         board_path_ + " (2026-11-01 00:00:00 UTC)"));
  EXPECT_TRUE(CheckClock(kIssued, BoardFloor()).ok());
}

TEST_F(ClockCheck, WaitsForNtpInsteadOfFailing) {
  NtpLaterClock clock(/*ntp_after=*/3, kIssued + absl::Hours(5));
  std::vector<std::string> said;
  ClockWaitOptions options;
  options.recheck = absl::Seconds(5);
  options.report_every = absl::Seconds(10);
  options.log = [&said](const std::string& words) { said.push_back(words); };
  const absl::Status waited =
      WaitForPlausibleClock(clock, BoardFloor(), options);
  EXPECT_TRUE(waited.ok()) << waited;
  // It looked again after each sleep, and went on once NTP set the clock.
  EXPECT_EQ(clock.sleeps(), 3);
  EXPECT_THAT(said, ElementsAre(StartsWith("the clock is 1970-01-02 00:00:00 "
                                           "UTC; waiting for NTP"),
                                StartsWith("the clock is 1970-01-02 00:00:10 "
                                           "UTC; waiting for NTP"),
                                "the clock is now 2026-11-01 05:00:00 UTC "
                                "(set after 15s); going on"));
}

TEST_F(ClockCheck, ARightClockGoesOnAtOnceSayingNothing) {
  SimulatedClock clock(kIssued + absl::Seconds(1));
  int said = 0;
  ClockWaitOptions options;
  options.log = [&said](const std::string&) { ++said; };
  EXPECT_TRUE(WaitForPlausibleClock(clock, BoardFloor(), options).ok());
  EXPECT_EQ(said, 0);
  EXPECT_EQ(clock.Now(), kIssued + absl::Seconds(1));  // no sleep
}

TEST_F(ClockCheck, GivesUpAfterMaxWaitInWords) {
  NtpLaterClock clock(/*ntp_after=*/1000, kIssued);
  ClockWaitOptions options;
  options.recheck = absl::Seconds(5);
  options.max_wait = absl::Seconds(30);
  const absl::Status waited =
      WaitForPlausibleClock(clock, BoardFloor(), options);
  EXPECT_TRUE(absl::IsDeadlineExceeded(waited)) << waited;
  EXPECT_THAT(std::string(waited.message()),
              HasSubstr("waiting for NTP (systemd-timesyncd)"));
  EXPECT_THAT(std::string(waited.message()),
              HasSubstr("still not set after waiting 30s (--clock_wait)"));
  EXPECT_EQ(clock.sleeps(), 6);
  // --clock_wait=0: no wait at all.
  NtpLaterClock impatient(/*ntp_after=*/1, kIssued);
  options.max_wait = absl::ZeroDuration();
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      WaitForPlausibleClock(impatient, BoardFloor(), options)));
  EXPECT_EQ(impatient.sleeps(), 0);
}

TEST_F(ClockCheck, AStopEndsTheWait) {
  NtpLaterClock clock(/*ntp_after=*/1000, kIssued);
  ClockWaitOptions options;
  options.stopped = [&clock] { return clock.sleeps() >= 2; };
  EXPECT_TRUE(
      absl::IsCancelled(WaitForPlausibleClock(clock, BoardFloor(), options)));
  EXPECT_EQ(clock.sleeps(), 2);
}

TEST(BuildTime, IsThisCommitsDateNotTheEpoch) {
  // CMake fixes it from SOURCE_DATE_EPOCH or git: after this code was
  // written (2026), before the year 3000.
  EXPECT_GT(FedberryBuildTime(), absl::FromUnixSeconds(1767225600));
  EXPECT_LT(FedberryBuildTime(), absl::FromUnixSeconds(32503680000));
}

}  // namespace
}  // namespace fedberry::client::clock_check_test
