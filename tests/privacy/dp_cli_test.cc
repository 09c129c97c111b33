// The fedberry-dp binary as a user runs it: both commands' last lines,
// their agreement with the library, the help, and usage errors (exit 2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "privacy/rdp_accountant.h"
#include "tests/privacy/tf_privacy_orders.h"
#include "tests/run_command.h"

namespace fedberry::privacy::dp_cli_test {
namespace {

struct Outcome {
  int code = -1;
  std::string output;  // stdout and stderr
};

Outcome Dp(const std::string& args) {
  Outcome run;
  run.output = ::fedberry::testing::RunCommand(
      absl::StrCat(FEDBERRY_DP_BIN, " ", args, " </dev/null"), &run.code);
  return run;
}

// The last line fedberry-dp `args` prints; a failure unless it exits 0.
std::string LastLineOfSuccess(const std::string& args) {
  const Outcome run = Dp(args);
  EXPECT_EQ(run.code, 0) << "fedberry-dp " << args << "\n" << run.output;
  std::vector<std::string> lines =
      absl::StrSplit(run.output, '\n', absl::SkipEmpty());
  return lines.empty() ? "" : lines.back();
}

// The number after `key`= in `line`'s space-separated fields.
double Field(const std::string& line, const std::string& key) {
  for (absl::string_view field : absl::StrSplit(line, ' ')) {
    if (absl::ConsumePrefix(&field, key + "=")) {
      double value;
      EXPECT_TRUE(absl::SimpleAtod(field, &value)) << line;
      return value;
    }
  }
  ADD_FAILURE() << "no " << key << "= in '" << line << "'";
  return -1;
}

PrivacySpent LibrarySpent(double q, double z, int64_t steps, double delta) {
  RdpAccountant accountant;
  EXPECT_TRUE(accountant.Compose(q, z, steps).ok());
  absl::StatusOr<PrivacySpent> spent = accountant.Spent(delta);
  EXPECT_TRUE(spent.ok()) << spent.status();
  return spent.ok() ? *spent : PrivacySpent{-1, -1};
}

TEST(DpCliTest, EpsilonEndsWithEpsilonAndOrder) {
  // TF Privacy's example-level case (rdp_test.cc): epsilon 3.2392676.
  const std::string last = LastLineOfSuccess(
      "epsilon --sampling_rate=0.01 --noise_multiplier=0.7 --steps=120 "
      "--delta=1e-5");
  ASSERT_TRUE(absl::StartsWith(last, "epsilon=")) << last;
  EXPECT_NEAR(Field(last, "epsilon"), 3.2392676, 5e-8);
  const PrivacySpent spent = LibrarySpent(0.01, 0.7, 120, 1e-5);
  EXPECT_NEAR(Field(last, "epsilon"), spent.epsilon, 1e-13 * spent.epsilon);
  EXPECT_EQ(Field(last, "order"), spent.order);
}

TEST(DpCliTest, EpsilonAtOtherOrders) {
  // TF Privacy's test_compute_dp_sgd_privacy case 0, at its orders.
  const std::string last = LastLineOfSuccess(absl::StrCat(
      "epsilon --sampling_rate=0.0025 --noise_multiplier=1.3 --steps=6000 "
      "--delta=1e-5 --orders=",
      absl::StrJoin(TfPrivacyOrders(), ",")));
  EXPECT_NEAR(Field(last, "epsilon"), 0.7242234026109595, 5e-8);
  EXPECT_EQ(Field(last, "order"), 19);
}

TEST(DpCliTest, NoiseEndsWithAMultiplierThatKeepsTheTarget) {
  const std::string last = LastLineOfSuccess(
      "noise --sampling_rate=0.1 --steps=50 --delta=1e-5 --target_epsilon=2");
  ASSERT_TRUE(absl::StartsWith(last, "noise_multiplier=")) << last;
  const double z = Field(last, "noise_multiplier");
  EXPECT_LE(LibrarySpent(0.1, z, 50, 1e-5).epsilon, 2.0);
  EXPECT_GT(LibrarySpent(0.1, z * (1 - 2e-4), 50, 1e-5).epsilon, 2.0);
  // The printed multiplier, fed back to the epsilon command.
  const std::string back = LastLineOfSuccess(
      absl::StrCat("epsilon --sampling_rate=0.1 --steps=50 --delta=1e-5 "
                   "--noise_multiplier=",
                   z));
  EXPECT_LE(Field(back, "epsilon"), 2.0);
}

TEST(DpCliTest, NoiseWithoutSamplingIsZero) {
  EXPECT_EQ(LastLineOfSuccess("noise --sampling_rate=0 --steps=50 "
                              "--delta=1e-5 --target_epsilon=1"),
            "noise_multiplier=0");
}

TEST(DpCliTest, HelpSaysWhatItAssumes) {
  for (const char* args : {"--help", "epsilon --help", "noise --help"}) {
    SCOPED_TRACE(args);
    Outcome run = Dp(args);
    EXPECT_EQ(run.code, 0) << run.output;
    // The line scripts/check-deb.sh looks for in every packaged binary.
    EXPECT_TRUE(absl::StrContains(run.output, "\nUsage: fedberry-dp "))
        << run.output;
    for (const char* words :
         {"Poisson sampling", "clipped to L2 norm C",
          "standard deviation Z x C", "add or remove one board",
          "Rényi DP of the Poisson-subsampled Gaussian mechanism",
          "improved conversion", "--sampling_rate", "--target_epsilon"}) {
      EXPECT_TRUE(absl::StrContains(run.output, words)) << words;
    }
  }
}

TEST(DpCliTest, UsageErrorsNameTheFlagAndExitTwo) {
  const std::string epsilon_flags =
      "--sampling_rate=0.1 --noise_multiplier=1 --steps=10 --delta=1e-5";
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "need a command"},
           {"budget", "unknown command 'budget'"},
           {"epsilon", "--sampling_rate is required"},
           {"epsilon --sampling_rate=0.1 --steps=10 --delta=1e-5",
            "--noise_multiplier is required"},
           {"noise --sampling_rate=0.1 --steps=10 --delta=1e-5",
            "--target_epsilon is required"},
           {"epsilon --sampling_rate=1.5 --noise_multiplier=1 --steps=10 "
            "--delta=1e-5",
            "--sampling_rate must be a number in [0, 1], got '1.5'"},
           {"epsilon --sampling_rate=abc --noise_multiplier=1 --steps=10 "
            "--delta=1e-5",
            "--sampling_rate must be a number in [0, 1], got 'abc'"},
           {"epsilon --sampling_rate=0.1 --noise_multiplier=-1 --steps=10 "
            "--delta=1e-5",
            "--noise_multiplier must be a number >= 0"},
           {"epsilon --sampling_rate=0.1 --noise_multiplier=1 --steps=2.5 "
            "--delta=1e-5",
            "--steps must be a whole number >= 0, got '2.5'"},
           {"epsilon --sampling_rate=0.1 --noise_multiplier=1 --steps=10 "
            "--delta=0",
            "--delta must be a number in (0, 1), got '0'"},
           {"noise --sampling_rate=0.1 --steps=10 --delta=1e-5 "
            "--target_epsilon=0",
            "--target_epsilon must be a number > 0"},
           {"noise --sampling_rate=0.1 --steps=10 --delta=1e-5 "
            "--target_epsilon=1 --noise_multiplier=1",
            "--noise_multiplier does not apply to noise"},
           {"epsilon " + epsilon_flags + " --target_epsilon=1",
            "--target_epsilon does not apply to epsilon"},
           {"epsilon " + epsilon_flags + " --orders=2,1", "--orders"},
           {"epsilon extra " + epsilon_flags, "unexpected argument 'extra'"}}) {
    SCOPED_TRACE(c.args);
    Outcome run = Dp(c.args);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_TRUE(absl::StrContains(run.output, c.message)) << run.output;
    EXPECT_TRUE(absl::StrContains(run.output, "Usage: ")) << run.output;
  }
  // Unknown flags are Abseil's to refuse, as in every fedberry binary.
  Outcome unknown = Dp("epsilon --no_such_flag=1");
  EXPECT_NE(unknown.code, 0) << unknown.output;
  EXPECT_TRUE(absl::StrContains(unknown.output, "no_such_flag"));
}

}  // namespace
}  // namespace fedberry::privacy::dp_cli_test
