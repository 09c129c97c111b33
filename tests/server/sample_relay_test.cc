#include "server/sample_relay.h"

#include <gtest/gtest.h>

#include <thread>

#include "proto/wire.h"

namespace fedberry::server::sample_relay_test {
namespace {

runtime::ImageDataset Samples(int64_t rows) {
  runtime::ImageDataset d;
  d.rows = rows;
  d.height = 1;
  d.width = 1;
  d.pixels.assign(rows, 9);
  d.labels.assign(rows, 3);
  return d;
}

TEST(SampleRelay, ReceiverGetsWhatTheSenderDeposited) {
  SampleRelay relay;
  relay.Open(2, {{"m1", "slow", "fast", 3}, {"m2", "slow", "other", 1}});
  ASSERT_EQ(relay.MovesFrom("slow").size(), 2u);
  ASSERT_EQ(relay.MovesTo("fast").size(), 1u);
  EXPECT_TRUE(relay.MovesTo("slow").empty());
  ASSERT_TRUE(relay.Deposit("slow", "m1", Samples(3)).ok());
  EXPECT_EQ(relay.held_bytes(), 6u);
  auto got = relay.Take("fast", "m1", absl::Now());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->rows, 3);
  // A retried push is recognised; the samples stay as they were.
  EXPECT_TRUE(absl::IsAlreadyExists(relay.Deposit("slow", "m1", Samples(3))));
}

TEST(SampleRelay, ASendersUpdateWaitsForTheSamplesItLent) {
  SampleRelay relay;
  relay.Open(2, {{"m1", "slow", "fast", 3}, {"m2", "slow", "other", 1}});
  EXPECT_EQ(relay.SamplesTo("fast"), 3u);
  EXPECT_EQ(relay.SamplesTo("slow"), 0u);
  // m1's samples are not here (a restarted server): the sender hears which
  // move to hand over again, with the reason its client acts on.
  absl::Status missing = relay.CheckLent("slow", {"m2"});
  EXPECT_TRUE(absl::IsFailedPrecondition(missing)) << missing;
  EXPECT_NE(missing.message().find("data move m1"), std::string::npos)
      << missing;
  EXPECT_EQ(wire::ReasonOf(missing), wire::kReasonSamplesMissing);
  ASSERT_TRUE(relay.Deposit("slow", "m1", Samples(3)).ok());
  // m2 was kept (cancelled above): nothing is missing now.
  EXPECT_TRUE(relay.CheckLent("slow", {}).ok());
  EXPECT_TRUE(relay.CheckLent("fast", {}).ok());  // lends nothing
}

TEST(SampleRelay, RefusesStrangersWrongCountsAndUnknownMoves) {
  SampleRelay relay;
  relay.Open(2, {{"m1", "slow", "fast", 3}});
  absl::Status s = relay.Deposit("fast", "m1", Samples(3));
  EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_NE(s.message().find("'slow' to send, not 'fast'"), std::string::npos);
  s = relay.Deposit("slow", "m1", Samples(2));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("planned for 3 samples, not 2"),
            std::string::npos);
  EXPECT_TRUE(absl::IsNotFound(relay.Deposit("slow", "m9", Samples(3))));
  EXPECT_TRUE(
      absl::IsPermissionDenied(relay.Take("slow", "m1", absl::Now()).status()));
  EXPECT_EQ(relay.held_bytes(), 0u);
}

// A move id comes from the wire: a refusal (logged and sent back) shows it
// escaped and cut, so no id forges a log line or floods the log.
TEST(SampleRelay, RefusalsShowAMoveIdEscapedAndCut) {
  SampleRelay relay;
  relay.Open(3, {{"m1", "slow", "fast", 3}});
  const std::string forged =
      "m9\n[2026-11-27 10:00:00.000] [info] round 3/3 done\x1b[2J" +
      std::string(1 << 20, 'x');
  for (const absl::Status& s :
       {relay.Deposit("slow", forged, Samples(3)),
        relay.Take("fast", forged, absl::Now()).status()}) {
    EXPECT_TRUE(absl::IsNotFound(s)) << s.code();
    EXPECT_LT(s.message().size(), 300u);
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
    EXPECT_EQ(s.message().find('\x1b'), std::string::npos);
    EXPECT_NE(s.message().find("m9\\n[2026"), std::string::npos) << s.message();
  }
}

TEST(SampleRelay, TakeWaitsForTheSenderUntilItsDeadline) {
  SampleRelay relay;
  relay.Open(2, {{"m1", "slow", "fast", 2}});
  auto late = relay.Take("fast", "m1", absl::Now() + absl::Milliseconds(20));
  EXPECT_TRUE(absl::IsDeadlineExceeded(late.status())) << late.status();
  EXPECT_NE(late.status().message().find("'slow' has not sent the 2 samples"),
            std::string::npos);
  std::thread sender([&] {
    absl::SleepFor(absl::Milliseconds(50));
    EXPECT_TRUE(relay.Deposit("slow", "m1", Samples(2)).ok());
  });
  auto got = relay.Take("fast", "m1", absl::InfiniteFuture());
  sender.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->rows, 2);
}

TEST(SampleRelay, ClosingTheRoundEndsAWaitAndDropsTheSamples) {
  SampleRelay relay;
  relay.Open(2, {{"m1", "slow", "fast", 2}, {"m2", "slow", "fast", 1}});
  ASSERT_TRUE(relay.Deposit("slow", "m2", Samples(1)).ok());
  std::thread closer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    relay.Close();
  });
  auto got = relay.Take("fast", "m1", absl::InfiniteFuture());
  closer.join();
  EXPECT_TRUE(absl::IsAborted(got.status())) << got.status();
  EXPECT_EQ(relay.held_bytes(), 0u);
  EXPECT_TRUE(relay.MovesTo("fast").empty());
}

TEST(SampleRelay, UndeliveredListsWhatASenderStillOwesUntilSentOrKept) {
  SampleRelay relay;
  relay.Open(3, {{"m1", "slow", "fast", 2}, {"m2", "slow", "other", 1}});
  EXPECT_EQ(relay.Undelivered("slow").size(), 2u);
  EXPECT_TRUE(relay.Undelivered("fast").empty());
  ASSERT_TRUE(relay.Deposit("slow", "m1", Samples(2)).ok());
  ASSERT_EQ(relay.Undelivered("slow").size(), 1u);
  EXPECT_EQ(relay.Undelivered("slow")[0].id, "m2");
  // Only the move's sender can keep it.
  relay.Cancel("other", "m2");
  EXPECT_EQ(relay.Undelivered("slow").size(), 1u);
  std::thread keeper([&] {
    absl::SleepFor(absl::Milliseconds(50));
    relay.Cancel("slow", "m2");
  });
  // The receiver waiting for kept samples is told at once.
  auto got = relay.Take("other", "m2", absl::InfiniteFuture());
  keeper.join();
  EXPECT_TRUE(absl::IsFailedPrecondition(got.status())) << got.status();
  EXPECT_NE(got.status().message().find("kept the 1 samples"),
            std::string::npos);
  EXPECT_TRUE(relay.Undelivered("slow").empty());
  EXPECT_TRUE(
      absl::IsFailedPrecondition(relay.Deposit("slow", "m2", Samples(1))));
}

}  // namespace
}  // namespace fedberry::server::sample_relay_test
