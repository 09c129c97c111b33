#include "server/round/open_round.h"

#include <gtest/gtest.h>

namespace fedberry::server::open_round_test {
namespace {

TEST(OpenRoundTest, AwaitsSelectedBoardsUntilTheyReportOrAreRefused) {
  OpenRound round;
  round.Start("r1-task", {"a", "b", "c"}, /*needed=*/3);
  EXPECT_EQ(round.task_id(), "r1-task");
  EXPECT_TRUE(round.Awaits("a"));
  EXPECT_FALSE(round.Awaits("stranger"));
  EXPECT_TRUE(round.Report("a"));
  EXPECT_FALSE(round.Report("a"));  // claimed once
  EXPECT_FALSE(round.Awaits("a"));
  EXPECT_TRUE(round.StopAwaiting("b"));
  EXPECT_FALSE(round.StopAwaiting("b"));
  EXPECT_FALSE(round.StopAwaiting("a"));  // it reported
  EXPECT_FALSE(round.StopAwaiting("stranger"));
  EXPECT_TRUE(round.UpdateRefused("b"));
  EXPECT_TRUE(round.StopAwaiting("c"));
  round.Decline("c");
  EXPECT_FALSE(round.UpdateRefused("c"));  // declining is no failure
  EXPECT_EQ(round.declined(), 1u);
  EXPECT_EQ(round.Unreported(), (std::set<std::string>{"b", "c"}));
  round.Unreport("a");  // its add failed: it may push again
  EXPECT_TRUE(round.Awaits("a"));
}

// The counts the close rule reads: a refused board that then sent a valid
// update counts as reported only.
TEST(OpenRoundTest, CountsARefusedBoardThatReportedSinceAsReportedOnly) {
  OpenRound round;
  round.Start("t", {"a", "b", "c"}, /*needed=*/2);
  ASSERT_TRUE(round.StopAwaiting("a"));
  ASSERT_TRUE(round.StopAwaiting("b"));
  ASSERT_TRUE(round.Report("b"));  // a valid push after the refused one
  RoundProgress p;
  round.Count(p);
  EXPECT_EQ(p.cohort, 3);
  EXPECT_EQ(p.refused, 1);
  EXPECT_EQ(p.reported, 1);
  EXPECT_EQ(p.needed, 2);
}

TEST(OpenRoundTest, ARejoinedBoardKeepsItsPlaceUpdateAndPlan) {
  OpenRound round;
  round.Start("t", {"old", "b"}, 2);
  round.Plan({{"old", 7}, {"b", 3}, {"idle", 0}}, {"b"});
  EXPECT_FALSE(round.Selected("b"));  // planned no work: out of the round
  ASSERT_TRUE(round.Report("old"));
  const OpenRound::Renamed was = round.Rename("old", "new");
  EXPECT_TRUE(was.selected);
  EXPECT_TRUE(was.reported);
  EXPECT_FALSE(round.Selected("old"));
  EXPECT_TRUE(round.HasReported("new"));
  EXPECT_EQ(round.PlannedSteps("new"), 7);
  EXPECT_EQ(round.PlannedSteps("old"), std::nullopt);
  const OpenRound::Renamed none = round.Rename("nobody", "x");
  EXPECT_FALSE(none.selected);
  EXPECT_FALSE(round.Selected("x"));
}

TEST(OpenRoundTest, ANewAttemptForgetsThePreviousOnesBoardsAndPlan) {
  OpenRound round;
  round.Start("t1", {"a"}, 1);
  round.Plan({{"a", 5}}, {});
  ASSERT_TRUE(round.Report("a"));
  round.Clear();
  EXPECT_FALSE(round.Selected("a"));
  EXPECT_EQ(round.task_id(), "t1");  // late pushes are told of it
  round.Start("t2", {"a"}, 1);
  EXPECT_TRUE(round.Awaits("a"));
  EXPECT_EQ(round.PlannedSteps("a"), std::nullopt);
}

}  // namespace
}  // namespace fedberry::server::open_round_test
