// SecAgg+ sessions run in process (board_session.h, server_session.h):
// the unmasked sum equals the plain sum of the quantised updates exactly,
// with no dropouts for n = 6..10 and with boards dropping at each of the
// four stages; the server never sees a plain update; too few survivors at
// any stage abandon the session with a status naming the stage.
#include <gtest/gtest.h>

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "secagg/parameters.h"
#include "secagg/quantise.h"
#include "tests/secagg/session_harness.h"

namespace fedberry::secagg::session_test {
namespace {

using testing::SessionRun;
using testing::TestConfig;

std::vector<uint32_t> AllBut(int n, const std::set<uint32_t>& left_out) {
  std::vector<uint32_t> boards;
  for (int b = 0; b < n; ++b) {
    if (left_out.count(b) == 0) boards.push_back(b);
  }
  return boards;
}

// Words where a masked input equals the board's plain update: with 2^24
// values a word, a mask leaves about length / 2^24 of them (here 0.00002).
int UnchangedWords(const std::vector<uint32_t>& a,
                   const std::vector<uint32_t>& b) {
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i] ? 1 : 0;
  return same;
}

TEST(SessionTest, SumIsExactForSixToTenBoards) {
  for (int n = 6; n <= 10; ++n) {
    absl::StatusOr<SecAggParameters> p = ChooseParameters(n);
    ASSERT_TRUE(p.ok()) << p.status();
    std::printf("n=%d: K=%d t=%d\n", n, p->neighbours, p->threshold);
    SessionRun run(TestConfig(n, p->neighbours, p->threshold, 24, 300, n), n);
    absl::StatusOr<AggregateResult> result = run.Run();
    ASSERT_TRUE(result.ok()) << n << ": " << result.status();
    EXPECT_EQ(result->counted, AllBut(n, {}));
    EXPECT_EQ(result->sum, run.PlainSum(result->counted)) << n;
    EXPECT_EQ(run.server().stage(), Stage::kDone);
    const SessionCounts& counts = result->counts;
    EXPECT_EQ(counts.started, n);
    for (int s = 0; s < kStageCount; ++s) {
      EXPECT_EQ(counts.survived[s], n) << s;
      EXPECT_TRUE(counts.dropped[s].empty()) << s;
      EXPECT_GT(counts.bytes_up[s], 0u) << s;
    }
    // Every masked input is 4 bytes a word plus the board's id.
    EXPECT_EQ(counts.bytes_up[2], n * (4 + 4 * 300u));
    for (const auto& [b, y] : run.masked) {
      EXPECT_LE(UnchangedWords(y.masked, run.update(b)), 1) << n << " " << b;
    }
  }
}

// One board silent from each stage on: from stages 0-2 its input is not
// counted, from stage 3 (it sent its masked input) it is; the sum is exact
// over the counted boards either way.
TEST(SessionTest, OneBoardDropsAtEachStage) {
  const int n = 8;
  for (int stage = 0; stage < kStageCount; ++stage) {
    SessionRun run(TestConfig(n, 5, 3, 24, 128, 40 + stage), 40 + stage);
    absl::StatusOr<AggregateResult> result = run.Run({{3, stage}});
    ASSERT_TRUE(result.ok()) << stage << ": " << result.status();
    const std::vector<uint32_t> counted =
        stage < 3 ? AllBut(n, {3}) : AllBut(n, {});
    EXPECT_EQ(result->counted, counted) << stage;
    EXPECT_EQ(result->sum, run.PlainSum(counted)) << stage;
    for (int s = 0; s < kStageCount; ++s) {
      EXPECT_EQ(result->counts.dropped[s],
                s == stage ? std::vector<uint32_t>{3} : std::vector<uint32_t>{})
          << stage << " " << s;
      EXPECT_EQ(result->counts.survived[s], s < stage ? n : n - 1);
    }
  }
}

// Small cohorts run on the complete graph (K = n - 1) with t = K/2 + 1,
// the least t that keeps a board's two secrets apart. Five boards (K = 4,
// t = 3) lose one at unmask and still count its input: every secret keeps
// 3 of its 4 shares. Three boards (K = 2, t = 2) cannot: the dead board
// held a share of each other board's self-mask, so the session is given up,
// saying so, never published wrongly.
TEST(SessionTest, FiveBoardsSurviveOneDroppingAtUnmaskThreeCannot) {
  for (uint32_t silent = 0; silent < 5; ++silent) {
    SessionRun run(TestConfig(5, 4, 3, 32, 64, 90 + silent), 90 + silent);
    absl::StatusOr<AggregateResult> result = run.Run({{silent, 3}});
    ASSERT_TRUE(result.ok()) << silent << ": " << result.status();
    EXPECT_EQ(result->counted, AllBut(5, {}));
    EXPECT_EQ(result->sum, run.PlainSum(result->counted));
  }
  SessionRun three(TestConfig(3, 2, 2, 32, 64, 99), 99);
  absl::StatusOr<AggregateResult> result = three.Run({{0, 3}});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(
      absl::StrContains(result.status().message(),
                        "self-mask seed came back, below the threshold t=2"))
      << result.status();
}

// Boards dropping at all four stages in one session: 0 before advertising,
// 1 before sharing, 2 and 6 before masking, 5 before unmasking. With K=7
// of 9 each board misses at most 2 others, so every secret the server must
// rebuild keeps at least 7 - 5 = t = 2 shares.
TEST(SessionTest, BoardsDropAtEveryStageInOneSession) {
  const int n = 10;
  SessionRun run(TestConfig(n, 7, 2, 20, 257, 77), 77);
  absl::StatusOr<AggregateResult> result =
      run.Run({{0, 0}, {1, 1}, {2, 2}, {6, 2}, {5, 3}});
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<uint32_t> counted = AllBut(n, {0, 1, 2, 6});
  EXPECT_EQ(result->counted, counted);
  EXPECT_EQ(result->sum, run.PlainSum(counted));
  const SessionCounts& c = result->counts;
  EXPECT_EQ(c.dropped[0], std::vector<uint32_t>{0});
  EXPECT_EQ(c.dropped[1], std::vector<uint32_t>{1});
  EXPECT_EQ(c.dropped[2], (std::vector<uint32_t>{2, 6}));
  EXPECT_EQ(c.dropped[3], std::vector<uint32_t>{5});
  EXPECT_EQ(c.survived, (std::array<int, kStageCount>{9, 8, 6, 5}));
  // The sum dequantises to the counted boards' values.
  absl::StatusOr<Quantiser> q = Quantiser::Create(1.0, 20, n);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->Dequantise(result->sum, counted.size()).ok());
}

// Four of six boards silent from one stage leave 2 < t = 3: the session is
// abandoned there, with the stage and the counts in the status, and stays
// abandoned.
TEST(SessionTest, BelowThresholdAbandonsNamingTheStage) {
  const char* names[] = {"advertise keys", "share keys", "masked input",
                         "unmask"};
  for (int stage = 0; stage < kStageCount; ++stage) {
    SessionRun run(TestConfig(6, 4, 3, 24, 64, 90 + stage), 90 + stage);
    std::map<uint32_t, int> silent;
    for (uint32_t b : {0u, 1u, 2u, 4u}) silent[b] = stage;
    const absl::Status status = run.Run(silent).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << stage;
    EXPECT_TRUE(absl::StrContains(
        status.message(), absl::StrCat("abandoned at stage '", names[stage],
                                       "': 2 of 6 boards survived it")))
        << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "threshold t=3")) << status;
    EXPECT_EQ(run.server().stage(), Stage::kAbandoned);
    EXPECT_EQ(run.server().abandon_reason(), status);
    EXPECT_EQ(run.server().counts().dropped[stage].size(), 4u);
    // Nothing moves an abandoned session on.
    EXPECT_EQ(run.server().Finish().status(), status);
    EXPECT_EQ(run.server().AcceptAdvertisement({}), status);
  }
}

// Enough boards overall but too few answers for one secret: board 5's
// neighbours that answer give fewer than t shares of its self-mask seed.
TEST(SessionTest, TooFewSharesOfOneSecretAbandonsAtUnmask) {
  SessionRun run(TestConfig(8, 3, 3, 24, 64, 5), 5);
  ASSERT_TRUE(run.Advertise().ok());
  ASSERT_TRUE(run.ShareKeys().ok());
  ASSERT_TRUE(run.MaskInputs().ok());
  // Silence one of board 5's three neighbours: two shares of its b remain.
  const uint32_t quiet = run.server().graph().Of(5)[0];
  const absl::Status status = run.Unmask({quiet}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "at stage 'unmask'"))
      << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "below the threshold t=3"))
      << status;
  EXPECT_EQ(run.server().stage(), Stage::kAbandoned);
}

}  // namespace
}  // namespace fedberry::secagg::session_test
