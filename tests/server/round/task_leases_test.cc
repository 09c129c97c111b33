#include "server/round/task_leases.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace fedberry::server::task_leases_test {
namespace {

const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);

std::vector<std::string> Ids(const std::vector<TaskLeases::Ended>& ended) {
  std::vector<std::string> ids;
  for (const auto& e : ended) ids.push_back(e.id);
  return ids;
}

TEST(TaskLeases, ALeaseEndsWhenItsBoardIsSilentAboutItsTask) {
  TaskLeases leases(absl::Minutes(2));
  leases.Lease("a", t0);
  leases.Lease("b", t0);
  leases.Heard("a", t0 + absl::Seconds(90));
  EXPECT_TRUE(leases.Expire(t0 + absl::Seconds(120)).empty());
  const std::vector<TaskLeases::Ended> ended =
      leases.Expire(t0 + absl::Seconds(121));
  ASSERT_EQ(Ids(ended), std::vector<std::string>{"b"});
  EXPECT_TRUE(
      absl::StrContains(ended[0].why, "not heard about its task for 2m1s"))
      << ended[0].why;
  // Benched for as long as its lease ran: another board takes the slot.
  EXPECT_TRUE(leases.Benched("b", t0 + absl::Seconds(241)));
  EXPECT_FALSE(leases.Benched("b", t0 + absl::Seconds(242)));
  EXPECT_FALSE(leases.Benched("a", t0 + absl::Seconds(121)));
  EXPECT_EQ(Ids(leases.Expire(t0 + absl::Seconds(211))),
            std::vector<std::string>{"a"});
}

// The deadline comes from the fleet's own task times: 4 x their median, at
// least 30 s; none until 3 tasks finished.
TEST(TaskLeases, TheDeadlineFollowsTheFleetsTaskTimes) {
  TaskLeases leases(absl::Hours(1));
  EXPECT_FALSE(leases.Deadline().has_value());
  const struct {
    absl::Duration task;
    absl::Duration deadline;
  } cases[] = {{absl::Seconds(2), absl::Seconds(30)},
               {absl::Seconds(20), absl::Seconds(80)}};
  for (const auto& c : cases) {
    TaskLeases fleet(absl::Hours(1));
    for (int i = 0; i < 3; ++i) {
      const std::string id = "honest-" + std::to_string(i);
      fleet.Lease(id, t0);
      fleet.Finished(id, t0 + c.task);
    }
    ASSERT_TRUE(fleet.Deadline().has_value());
    EXPECT_EQ(*fleet.Deadline(), c.deadline);
    // A board that heartbeats but never pushes holds its slot no longer.
    fleet.Lease("stalling", t0);
    for (absl::Duration at = absl::ZeroDuration(); at <= c.deadline;
         at += absl::Seconds(10)) {
      fleet.Heard("stalling", t0 + at);
      EXPECT_TRUE(fleet.Expire(t0 + at).empty()) << at;
    }
    const auto ended = fleet.Expire(t0 + c.deadline + absl::Seconds(1));
    ASSERT_EQ(Ids(ended), std::vector<std::string>{"stalling"});
    EXPECT_TRUE(
        absl::StrContains(ended[0].why, "past the fleet's task deadline"))
        << ended[0].why;
  }
}

TEST(TaskLeases, ALeaseFollowsARejoinAndGoesWithItsTask) {
  TaskLeases leases(absl::Minutes(2));
  leases.Lease("old", t0);
  leases.Rename("old", "new");
  leases.Heard("new", t0 + absl::Minutes(1));
  EXPECT_TRUE(leases.Expire(t0 + absl::Minutes(2)).empty());
  leases.Lease("gone", t0);
  leases.RetainOnly({"new"});
  EXPECT_EQ(Ids(leases.Expire(t0 + absl::Minutes(10))),
            std::vector<std::string>{"new"});
}

}  // namespace
}  // namespace fedberry::server::task_leases_test
