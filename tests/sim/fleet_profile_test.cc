#include "sim/fleet_profile.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fedberry::sim::fleet_profile_test {
namespace {

TEST(FleetProfileTest, ParsesLinesCommentsAndDefaults) {
  auto fleet = ParseFleetProfile(
      "# a comment\n"
      "data_fraction=1 compute_slowdown=1\n"
      "\n"
      "   compute_slowdown=4\tdata_fraction=0.5  # slow, half the data\n"
      "bandwidth_mbit=8\n");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->size(), 3u);
  EXPECT_DOUBLE_EQ((*fleet)[1].compute_slowdown, 4);
  EXPECT_DOUBLE_EQ((*fleet)[1].data_fraction, 0.5);
  EXPECT_DOUBLE_EQ((*fleet)[2].bandwidth_mbit, 8);
  EXPECT_DOUBLE_EQ((*fleet)[2].compute_slowdown, 1);
  EXPECT_DOUBLE_EQ((*fleet)[2].data_fraction, 1);
}

TEST(FleetProfileTest, RefusesBadLinesNamingThem) {
  auto bad = ParseFleetProfile("compute_slowdown=1\ncompute_slowdown=0.5\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(ParseFleetProfile("speed=3\n").ok());
  EXPECT_FALSE(ParseFleetProfile("data_fraction=0\n").ok());
  EXPECT_FALSE(ParseFleetProfile("data_fraction=abc\n").ok());
  EXPECT_FALSE(ParseFleetProfile("bandwidth_mbit=-1\n").ok());
  EXPECT_FALSE(ParseFleetProfile("# nothing\n\n").ok());
  EXPECT_FALSE(LoadFleetProfile("/nonexistent/fleet.txt").ok());
}

TEST(FleetProfileTest, ParsesPauses) {
  auto fleet = ParseFleetProfile(
      "compute_slowdown=1\n"
      "pause_every=3 pause_seconds=12.5\n"
      "pause_every=0 pause_seconds=0\n");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->size(), 3u);
  EXPECT_EQ((*fleet)[0].pause_every, 0);
  EXPECT_DOUBLE_EQ((*fleet)[0].pause_seconds, 0);
  EXPECT_EQ((*fleet)[1].pause_every, 3);
  EXPECT_DOUBLE_EQ((*fleet)[1].pause_seconds, 12.5);
  EXPECT_DOUBLE_EQ((*fleet)[1].compute_slowdown, 1);
  EXPECT_EQ((*fleet)[2].pause_every, 0);
}

TEST(FleetProfileTest, RefusesBadPausesNamingTheLineAndTheKey) {
  for (const char* bad :
       {"pause_every=-1 pause_seconds=5", "pause_every=1.5 pause_seconds=5",
        "pause_every=3e9 pause_seconds=5", "pause_every=2 pause_seconds=-1",
        "pause_every=2 pause_seconds=inf", "pause_every=2 pause_seconds=nan",
        "pause_every=2", "pause_seconds=5", "pause_every=2 pause_seconds=0",
        "pause_every=0 pause_seconds=5", "pause_every=x pause_seconds=5"}) {
    auto fleet =
        ParseFleetProfile(absl::StrCat("compute_slowdown=1\n", bad, "\n"));
    ASSERT_FALSE(fleet.ok()) << bad;
    EXPECT_EQ(fleet.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(fleet.status().message().find("line 2"), std::string::npos)
        << fleet.status();
    EXPECT_NE(fleet.status().message().find("pause_"), std::string::npos)
        << fleet.status();
  }
}

}  // namespace
}  // namespace fedberry::sim::fleet_profile_test
