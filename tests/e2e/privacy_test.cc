// End to end: differential privacy through fedberry-sim and fedberry-server.
// Every round's epsilon is what fedberry-dp computes for the logged
// parameters, a target epsilon ends the job at the right round, and
// settings that would void the guarantee are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/planned_epsilon.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::privacy_test {
namespace {

using testing::RunCommand;
const std::string kBin = FEDBERRY_BIN_DIR;

std::vector<nlohmann::json> Rounds(const std::string& out) {
  std::vector<nlohmann::json> rounds;
  std::ifstream in(out + "/rounds.jsonl");
  std::string line;
  while (std::getline(in, line)) rounds.push_back(nlohmann::json::parse(line));
  return rounds;
}

double PlannedEpsilon(double q, double z, int64_t steps) {
  return testing::PlannedEpsilon(kBin, q, z, steps);
}

std::string SimCommand(const testing::TempDir& dir, int rounds,
                       const std::string& extra) {
  return absl::StrCat(kBin, "/fedberry-sim --clients=4 --rounds=", rounds,
                      " --fraction=0.5 --min_clients=1 --local_steps=10 "
                      "--batch_size=16 --lr=0.02 --dp_noise_multiplier=1.2 "
                      "--dp_clip=0.05 --dp_noise_seed=3 --data=",
                      dir.path(), " --output=", dir / "out", " ", extra);
}

TEST(Privacy, EachRoundsEpsilonIsWhatFedberryDpComputes) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  int code = 0;
  const std::string out = RunCommand(SimCommand(dir, 3, ""), &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("dp_epsilon"), std::string::npos) << out;
  std::ifstream report(dir / "out/report.html");
  const std::string html((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"plot-privacy-budget\""), std::string::npos);
  const std::vector<nlohmann::json> rounds = Rounds(dir / "out");
  ASSERT_EQ(rounds.size(), 3u) << out;
  int64_t last_steps = 0;
  for (const auto& r : rounds) {
    const int64_t steps = r.at("dp_steps").get<int64_t>();
    // Draws too small to run are charged too: never fewer than the rounds.
    EXPECT_GE(steps, r.at("round").get<int64_t>());
    EXPECT_GT(steps, last_steps);
    last_steps = steps;
    EXPECT_EQ(r.at("dp_sampling_rate").get<double>(), 0.5);
    EXPECT_EQ(r.at("dp_noise_multiplier").get<double>(), 1.2);
    EXPECT_EQ(r.at("dp_clip").get<double>(), 0.05);
    EXPECT_EQ(r.at("dp_delta").get<double>(), 1e-5);
    const double clipped = r.at("dp_clipped_fraction").get<double>();
    EXPECT_TRUE(clipped >= 0 && clipped <= 1) << r;
    EXPECT_NEAR(r.at("dp_epsilon").get<double>(),
                PlannedEpsilon(0.5, 1.2, steps),
                1e-9 * r.at("dp_epsilon").get<double>())
        << r;
  }
}

// The server says why it stopped, with what it spent: read from its log,
// since draws too small to run are charged too and may leave few rounds.
TEST(Privacy, TargetEpsilonEndsTheJobBeforeARoundWouldExceedIt) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  const double target =
      (PlannedEpsilon(0.5, 1.2, 2) + PlannedEpsilon(0.5, 1.2, 3)) / 2;
  int code = 0;
  const std::string out = RunCommand(
      SimCommand(dir, 6, absl::StrCat("--dp_target_epsilon=", target)), &code);
  std::ifstream log(dir / "out/logs/server.log");
  std::string line, stop;
  while (std::getline(log, line)) {
    if (line.find("beyond --dp_target_epsilon") != std::string::npos) {
      stop = line;
    }
  }
  ASSERT_FALSE(stop.empty()) << out;
  // "... (spent <epsilon> over <steps> rounds)": two charges fit, not three.
  const size_t at = stop.rfind("(spent ");
  ASSERT_NE(at, std::string::npos) << stop;
  std::istringstream spent(stop.substr(at + 7));
  double epsilon = 0;
  std::string over;
  int64_t steps = 0;
  spent >> epsilon >> over >> steps;
  EXPECT_EQ(steps, 2) << stop;
  EXPECT_LE(epsilon, target) << stop;
  // Published rounds, if any, are within the target.
  const std::vector<nlohmann::json> rounds = Rounds(dir / "out");
  EXPECT_LE(rounds.size(), 2u) << out;
  for (const auto& r : rounds) {
    EXPECT_LE(r.at("dp_steps").get<int64_t>(), 2);
    EXPECT_LE(r.at("dp_epsilon").get<double>(), target);
  }
}

TEST(Privacy, AdaptiveClipMovesTheBoundAndKeepsTheAccounting) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  int code = 0;
  const std::string out =
      RunCommand(SimCommand(dir, 4, "--dp_adaptive_clip=true"), &code);
  ASSERT_EQ(code, 0) << out;
  const std::vector<nlohmann::json> rounds = Rounds(dir / "out");
  ASSERT_EQ(rounds.size(), 4u) << out;
  std::set<double> bounds;
  for (const auto& r : rounds) {
    bounds.insert(r.at("dp_clip").get<double>());
    // The total noise multiplier is what the accountant charges.
    EXPECT_NEAR(r.at("dp_epsilon").get<double>(),
                PlannedEpsilon(0.5, 1.2, r.at("dp_steps").get<int64_t>()),
                1e-9 * r.at("dp_epsilon").get<double>());
  }
  // It starts at --dp_clip and moves every round by the geometric update,
  // exp(-0.2 x (share - 0.5)) with the noisy share in [0, 1].
  EXPECT_EQ(rounds[0].at("dp_clip").get<double>(), 0.05);
  EXPECT_GE(bounds.size(), 2u);  // it moved (a step and its inverse may
                                 // bring it back)
  for (size_t i = 1; i < rounds.size(); ++i) {
    const double step = rounds[i].at("dp_clip").get<double>() /
                        rounds[i - 1].at("dp_clip").get<double>();
    EXPECT_GE(step, std::exp(-0.1) - 1e-9);
    EXPECT_LE(step, std::exp(0.1) + 1e-9);
  }
}

TEST(Privacy, LocalNoiseIsEachBoardsOwnBudget) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  int code = 0;
  const std::string out =
      RunCommand(SimCommand(dir, 3, "--dp_local=true"), &code);
  ASSERT_EQ(code, 0) << out;
  const std::vector<nlohmann::json> rounds = Rounds(dir / "out");
  ASSERT_EQ(rounds.size(), 3u) << out;
  for (const auto& r : rounds) {
    EXPECT_TRUE(r.at("dp_local").get<bool>());
    // The busiest board's rounds, each a Gaussian mechanism of multiplier
    // z / 2 with no sampling.
    const int64_t steps = r.at("dp_steps").get<int64_t>();
    EXPECT_LE(steps, r.at("round").get<int64_t>());
    EXPECT_NEAR(r.at("dp_epsilon").get<double>(),
                PlannedEpsilon(1.0, 0.6, steps),
                1e-9 * r.at("dp_epsilon").get<double>());
  }
  EXPECT_GT(testing::CountLines(dir / "out/logs/server.log",
                                "local differential privacy"),
            0);
}

TEST(Privacy, SettingsThatVoidTheGuaranteeAreRefused) {
  testing::TempDir dir;
  const std::string server =
      absl::StrCat(kBin, "/fedberry-server --eval_data= --listen=127.0.0.1:0 ",
                   "--output=", dir / "out", " --dp_noise_multiplier=1 ");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--dp_clip=1 --strategy=krum --byzantine=0", "krum"},
      {"", "--dp_clip"},
      {"--dp_clip=1 --model=resnet8", "buffer"},
      {"--dp_clip=1 --target_updates=2", "Poisson"},
      {"--dp_clip=1 --dp_delta=2", "--dp_delta"},
      {"--dp_clip=1 --dp_target_epsilon=0.001", "allows no round"},
  };
  for (const auto& [flags, named] : cases) {
    int code = 0;
    const std::string out = RunCommand(server + flags, &code);
    EXPECT_EQ(code, 2) << flags << "\n" << out;
    EXPECT_NE(out.find(named), std::string::npos) << flags << "\n" << out;
  }
}

}  // namespace
}  // namespace fedberry::privacy_test
