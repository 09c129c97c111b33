// Shamir sharing over GF(2^61 - 1): tables of secrets and thresholds round
// trip; t - 1 shares fail, any t reconstruct the same secret; altered shares
// give another secret or an error (caught for certain only when more than t
// shares are given); malformed share sets are refused by name.
#include "secagg/shamir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "secagg/testing/fake_random.h"

namespace fedberry::secagg::shamir_test {
namespace {

using testing::ScriptedRandom;
using testing::SeededRandom;

std::vector<uint8_t> Bytes(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + 37 * i);
  return v;
}

std::vector<Share> SplitOrDie(const std::vector<uint8_t>& secret, int t, int n,
                              uint64_t seed = 1) {
  SeededRandom random(seed);
  absl::StatusOr<std::vector<Share>> shares = Split(secret, t, n, random);
  EXPECT_TRUE(shares.ok()) << shares.status();
  return shares.ok() ? *shares : std::vector<Share>();
}

void ExpectRefused(const absl::Status& status, absl::StatusCode code,
                   const std::string& words) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), words))
      << status << " does not say " << words;
}

struct RoundTripCase {
  size_t secret_size;
  int threshold;
  int n;
};

class ShamirRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(ShamirRoundTrip, AnyThresholdSubsetGivesTheSecret) {
  const RoundTripCase c = GetParam();
  const std::vector<uint8_t> secret = Bytes(c.secret_size, 0xf0);
  const std::vector<Share> shares = SplitOrDie(secret, c.threshold, c.n);
  ASSERT_EQ(shares.size(), static_cast<size_t>(c.n));
  for (int i = 0; i < c.n; ++i) {
    EXPECT_EQ(shares[i].index, static_cast<uint32_t>(i + 1));
    EXPECT_EQ(shares[i].secret_size, c.secret_size);
    EXPECT_EQ(shares[i].values.size(),
              (c.secret_size + kShamirChunkBytes - 1) / kShamirChunkBytes);
    for (uint64_t v : shares[i].values) EXPECT_LT(v, kShamirPrime);
  }
  // Windows of t consecutive shares (wrapping), each reversed too, and all
  // n shares: every one gives the same secret.
  for (int start = 0; start < c.n; ++start) {
    std::vector<Share> subset;
    subset.reserve(c.threshold);
    for (int k = 0; k < c.threshold; ++k) {
      subset.push_back(shares[(start + k) % c.n]);
    }
    absl::StatusOr<std::vector<uint8_t>> back =
        Reconstruct(subset, c.threshold);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, secret) << "window from share " << start + 1;
    std::reverse(subset.begin(), subset.end());
    back = Reconstruct(subset, c.threshold);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, secret);
  }
  absl::StatusOr<std::vector<uint8_t>> all = Reconstruct(shares, c.threshold);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, secret);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ShamirRoundTrip,
    ::testing::Values(RoundTripCase{32, 3, 5},    // a key, 5 chunks
                      RoundTripCase{32, 1, 4},    // t = 1: a copy
                      RoundTripCase{32, 7, 7},    // t = n
                      RoundTripCase{1, 2, 3},     // one byte
                      RoundTripCase{7, 2, 3},     // exactly one chunk
                      RoundTripCase{8, 4, 9},     // one byte into chunk 2
                      RoundTripCase{33, 10, 40},  // SecAgg+-sized
                      RoundTripCase{1024, 5, 8}));

// Every subset of size t of 6 shares (C(6, 3) = 20) gives the same secret.
TEST(ShamirTest, EveryThresholdSubsetAgrees) {
  const std::vector<uint8_t> secret = Bytes(32, 1);
  const std::vector<Share> shares = SplitOrDie(secret, 3, 6);
  int subsets = 0;
  for (int a = 0; a < 6; ++a) {
    for (int b = a + 1; b < 6; ++b) {
      for (int c = b + 1; c < 6; ++c) {
        const std::vector<Share> subset = {shares[a], shares[b], shares[c]};
        absl::StatusOr<std::vector<uint8_t>> back = Reconstruct(subset, 3);
        ASSERT_TRUE(back.ok()) << back.status();
        EXPECT_EQ(*back, secret);
        ++subsets;
      }
    }
  }
  EXPECT_EQ(subsets, 20);
}

TEST(ShamirTest, OneShareFewerThanTheThresholdIsRefused) {
  const std::vector<Share> shares = SplitOrDie(Bytes(32, 9), 4, 6);
  const std::vector<Share> three(shares.begin(), shares.begin() + 3);
  ExpectRefused(Reconstruct(three, 4).status(),
                absl::StatusCode::kInvalidArgument,
                "3 Shamir shares given; reconstructing needs the threshold, 4");
  // Claiming a lower threshold does not help: t - 1 shares define another
  // polynomial, so they give some other value, not the secret.
  absl::StatusOr<std::vector<uint8_t>> wrong = Reconstruct(three, 3);
  if (wrong.ok()) {
    EXPECT_NE(*wrong, Bytes(32, 9));
  } else {
    EXPECT_EQ(wrong.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(ShamirTest, SharesDependOnTheRandomnessNotJustTheSecret) {
  const std::vector<uint8_t> secret = Bytes(32, 5);
  const std::vector<Share> a = SplitOrDie(secret, 3, 5, 1);
  const std::vector<Share> b = SplitOrDie(secret, 3, 5, 2);
  EXPECT_NE(a[0].values, b[0].values);
  // The same seed gives the same shares (the fake source is deterministic).
  EXPECT_EQ(a[0].values, SplitOrDie(secret, 3, 5, 1)[0].values);
}

// With exactly t shares nothing is redundant: an altered value moves the
// result. A value replaced at random usually lands the result's chunk out
// of range (chunks hold 56 of the field's 61 bits: caught about 31 times in
// 32, DataLoss); a small, chosen change keeps it in range and gives another
// secret silently. That is why shares travel in authenticated boxes.
TEST(ShamirTest, AnAlteredShareAmongExactlyTGivesAnotherSecretOrAnError) {
  const std::vector<uint8_t> secret = Bytes(32, 3);
  SeededRandom noise(99);
  int caught = 0;
  int silent = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Share> shares = SplitOrDie(secret, 3, 3);
    uint8_t bytes[8];
    ASSERT_TRUE(noise.Fill(absl::MakeSpan(bytes)).ok());
    uint64_t v = 0;
    for (uint8_t b : bytes) v = (v << 8) | b;
    shares[1].values[0] = v % kShamirPrime;
    absl::StatusOr<std::vector<uint8_t>> back = Reconstruct(shares, 3);
    if (back.ok()) {
      EXPECT_NE(*back, secret) << trial;
      ++silent;
    } else {
      EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
      ++caught;
    }
  }
  EXPECT_GT(caught, 170);
  EXPECT_LT(silent, 30);

  // Share 2's Lagrange coefficient at 0 among x = 1, 2, 3 is -3: adding 1
  // to it takes 3 from the chunk, which stays in range.
  std::vector<Share> shares = SplitOrDie(secret, 3, 3);
  shares[1].values[0] = (shares[1].values[0] + 1) % kShamirPrime;
  absl::StatusOr<std::vector<uint8_t>> back = Reconstruct(shares, 3);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_NE(*back, secret);
  EXPECT_EQ(std::vector<uint8_t>(back->begin() + 7, back->end()),
            std::vector<uint8_t>(secret.begin() + 7, secret.end()));
}

// With more than t shares, any single altered share is always caught.
TEST(ShamirTest, AnAlteredShareBeyondTheThresholdIsAlwaysCaught) {
  const std::vector<uint8_t> secret = Bytes(32, 3);
  for (int victim = 0; victim < 5; ++victim) {
    for (size_t chunk = 0; chunk < 5; ++chunk) {
      std::vector<Share> shares = SplitOrDie(secret, 3, 5);
      shares[victim].values[chunk] =
          (shares[victim].values[chunk] + 1) % kShamirPrime;
      ExpectRefused(Reconstruct(shares, 3).status(),
                    absl::StatusCode::kDataLoss, "corrupt");
    }
  }
}

TEST(ShamirTest, SharesOfAnotherSecretAreCaughtBeyondTheThreshold) {
  std::vector<Share> shares = SplitOrDie(Bytes(32, 1), 2, 4, 1);
  shares[3] = SplitOrDie(Bytes(32, 2), 2, 4, 2)[3];
  ExpectRefused(Reconstruct(shares, 2).status(), absl::StatusCode::kDataLoss,
                "Shamir share 4 disagrees with the first 2 shares");
}

struct MalformedCase {
  std::string name;
  void (*alter)(std::vector<Share>&);
  std::string words;
};

TEST(ShamirTest, MalformedShareSetsAreRefusedByName) {
  const std::vector<MalformedCase> cases = {
      {"duplicate index", [](std::vector<Share>& s) { s[2] = s[0]; },
       "two Shamir shares have index 1"},
      {"duplicate index, other values",
       [](std::vector<Share>& s) { s[2].index = s[1].index; },
       "two Shamir shares have index 2"},
      {"index 0", [](std::vector<Share>& s) { s[1].index = 0; },
       "index 0 is outside 1..65535"},
      {"index too large", [](std::vector<Share>& s) { s[0].index = 70000; },
       "index 70000 is outside"},
      {"fewer values", [](std::vector<Share>& s) { s[1].values.pop_back(); },
       "Shamir share 2 is of a 32-byte secret with 4 values"},
      {"other secret size",
       [](std::vector<Share>& s) { s[2].secret_size = 31; },
       "Shamir share 3 is of a 31-byte secret"},
      {"value out of field",
       [](std::vector<Share>& s) { s[1].values[3] = kShamirPrime; },
       "outside the field"},
      {"zero secret size",
       [](std::vector<Share>& s) {
         for (Share& share : s) share.secret_size = 0;
       },
       "secret size 0 is outside"},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Share> shares = SplitOrDie(Bytes(32, 7), 3, 4);
    c.alter(shares);
    ExpectRefused(Reconstruct(shares, 3).status(),
                  absl::StatusCode::kInvalidArgument, c.words);
  }
  ExpectRefused(Reconstruct(SplitOrDie(Bytes(32, 7), 3, 4), 0).status(),
                absl::StatusCode::kInvalidArgument, "threshold 0 is below 1");
  ExpectRefused(Reconstruct({}, 1).status(), absl::StatusCode::kInvalidArgument,
                "0 Shamir shares given");
}

TEST(ShamirTest, SplitRefusesBadSizes) {
  SeededRandom random(1);
  const std::vector<uint8_t> key = Bytes(32, 0);
  ExpectRefused(Split({}, 1, 2, random).status(),
                absl::StatusCode::kInvalidArgument, "secret of 0 bytes");
  ExpectRefused(Split(Bytes(1025, 0), 1, 2, random).status(),
                absl::StatusCode::kInvalidArgument, "secret of 1025 bytes");
  ExpectRefused(Split(key, 4, 3, random).status(),
                absl::StatusCode::kInvalidArgument, "threshold 4 of 3 shares");
  ExpectRefused(Split(key, 0, 3, random).status(),
                absl::StatusCode::kInvalidArgument, "threshold 0 of 3 shares");
  ExpectRefused(Split(key, 2, 65536, random).status(),
                absl::StatusCode::kInvalidArgument, "of 65536 shares");
}

TEST(ShamirTest, RandomnessFailuresAndOutOfFieldDrawsAreHandled) {
  const std::vector<uint8_t> key = Bytes(32, 0);
  ScriptedRandom none({});
  EXPECT_EQ(Split(key, 2, 3, none).status().code(),
            absl::StatusCode::kInternal);
  // 2^61 - 1 (all 61 bits set) is not a field element: redrawn, so the
  // 8 bytes after it are used.
  std::vector<uint8_t> script(8, 0xff);
  for (int i = 0; i < 5 * 8; ++i) script.push_back(static_cast<uint8_t>(i));
  ScriptedRandom scripted(script);
  absl::StatusOr<std::vector<Share>> shares = Split(key, 2, 3, scripted);
  ASSERT_TRUE(shares.ok()) << shares.status();
  EXPECT_EQ(scripted.used(), script.size());
  absl::StatusOr<std::vector<uint8_t>> back = Reconstruct(*shares, 2);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, key);
  // A source stuck on that value is reported rather than looped on.
  ScriptedRandom stuck(std::vector<uint8_t>(size_t{64} * 8, 0xff));
  ExpectRefused(Split(key, 2, 3, stuck).status(), absl::StatusCode::kInternal,
                "64 values outside the field");
}

}  // namespace
}  // namespace fedberry::secagg::shamir_test
