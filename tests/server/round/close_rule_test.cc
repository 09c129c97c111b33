#include "server/round/close_rule.h"

#include <gtest/gtest.h>

#include <string>

namespace fedberry::server::close_rule_test {
namespace {

constexpr absl::Duration kDeadline = absl::Minutes(10);

CloseOptions Options(double quorum = 0.5,
                     absl::Duration grace = absl::ZeroDuration(),
                     int min_updates = 1) {
  return {quorum, kDeadline, grace, min_updates};
}

struct Row {
  std::string name;
  RoundProgress progress;
  CloseOptions options;
  CloseAction action;
  int cut_off = 0;
};

// selected, cohort, refused, reported, needed, paused, released, elapsed
RoundProgress P(int selected, int cohort, int refused, int reported, int needed,
                int paused, int released, absl::Duration elapsed) {
  return {selected, cohort, refused,  reported,
          needed,   paused, released, elapsed};
}

TEST(CloseRule, Table) {
  const absl::Duration early = absl::Minutes(1);
  const absl::Duration at_deadline = kDeadline;
  const absl::Duration in_grace = kDeadline + absl::Minutes(1);
  const Row rows[] = {
      {"nobody reported yet", P(4, 4, 0, 0, 4, 0, 0, early), Options(),
       CloseAction::kWait},
      {"some reported, before the deadline", P(4, 4, 0, 3, 4, 0, 0, early),
       Options(), CloseAction::kWait},
      {"everyone reported", P(4, 4, 0, 4, 4, 0, 0, early), Options(),
       CloseAction::kClose},
      {"everyone reported, at the deadline",
       P(4, 4, 0, 4, 4, 0, 0, at_deadline), Options(), CloseAction::kClose},
      {"the updates it needs, over-selected", P(6, 6, 0, 4, 4, 0, 0, early),
       Options(), CloseAction::kClose, 2},
      {"a refused board is not awaited", P(4, 4, 1, 3, 4, 0, 0, early),
       Options(), CloseAction::kClose},
      {"a retired board leaves the cohort", P(4, 3, 0, 3, 4, 0, 0, early),
       Options(), CloseAction::kClose},
      // Not at once: boards that only send what is refused would otherwise
      // train and be refused again in a tight loop.
      {"every board refused: waits for the deadline",
       P(2, 2, 2, 0, 2, 0, 0, early), Options(), CloseAction::kWait},
      {"every board refused, at the deadline",
       P(2, 2, 2, 0, 2, 0, 0, at_deadline), Options(), CloseAction::kAbandon},
      {"all that can come did, below the strategy's minimum",
       P(5, 5, 1, 4, 5, 0, 0, early), Options(0.5, absl::ZeroDuration(), 5),
       CloseAction::kAbandon},
      {"the strategy's minimum, awaited boards may still come",
       P(6, 6, 0, 4, 4, 0, 0, early), Options(0.5, absl::ZeroDuration(), 5),
       CloseAction::kWait},
      {"the strategy's minimum reached", P(6, 6, 0, 5, 4, 0, 0, early),
       Options(0.5, absl::ZeroDuration(), 5), CloseAction::kClose, 1},
      {"a quorum below the strategy's minimum at the deadline",
       P(8, 8, 0, 4, 8, 0, 0, at_deadline),
       Options(0.5, absl::ZeroDuration(), 5), CloseAction::kAbandon},
      {"the cohort left before reporting", P(3, 0, 0, 0, 3, 0, 0, early),
       Options(), CloseAction::kAbandon},
      {"deadline with a quorum", P(4, 4, 0, 2, 4, 0, 0, at_deadline), Options(),
       CloseAction::kClose},
      {"deadline below the quorum", P(4, 4, 0, 1, 4, 0, 0, at_deadline),
       Options(), CloseAction::kAbandon},
      {"a quorum is at least one update", P(1, 1, 0, 0, 1, 0, 0, at_deadline),
       Options(0.0), CloseAction::kAbandon},
      {"quorum rounds up", P(5, 5, 0, 2, 5, 0, 0, at_deadline), Options(),
       CloseAction::kAbandon},
      {"paused boards, no grace", P(4, 4, 0, 1, 4, 2, 0, at_deadline),
       Options(0.5), CloseAction::kAbandon},
      {"paused boards in the grace", P(4, 4, 0, 1, 4, 2, 1, in_grace),
       Options(0.5, absl::Minutes(5)), CloseAction::kGrace},
      {"the grace ran out",
       P(4, 4, 0, 1, 4, 2, 1, kDeadline + absl::Minutes(5)),
       Options(0.5, absl::Minutes(5)), CloseAction::kAbandon},
      {"grace only below the quorum", P(4, 4, 0, 2, 4, 2, 0, in_grace),
       Options(0.5, absl::Minutes(5)), CloseAction::kClose},
      {"grace only for paused boards", P(4, 4, 0, 1, 4, 0, 0, in_grace),
       Options(0.5, absl::Minutes(5)), CloseAction::kAbandon},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const CloseDecision d = DecideClose(row.progress, row.options);
    EXPECT_EQ(CloseActionName(d.action),
              std::string(CloseActionName(row.action)));
    EXPECT_EQ(d.cut_off, row.cut_off);
    EXPECT_EQ(d.late, row.progress.elapsed >= kDeadline);
  }
}

TEST(CloseRule, QuorumIsAShareOfTheSelected) {
  const CloseDecision d =
      DecideClose(P(10, 4, 0, 0, 10, 0, 0, absl::ZeroDuration()), Options(0.3));
  EXPECT_EQ(d.quorum, 3);  // ceil(0.3 x 10), not of the 4 left
}

}  // namespace
}  // namespace fedberry::server::close_rule_test
