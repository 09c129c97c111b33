#include "sim/fleet_profile.h"

#include "gtest/gtest.h"

namespace fedberry::sim {
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

}  // namespace
}  // namespace fedberry::sim
