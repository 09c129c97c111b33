// End to end: secure aggregation (--secure_aggregation=secagg+) through
// fedberry-sim's real server and board processes. A 6-board job ends within
// a hundredth of plain FedAvg's accuracy on the same seed; boards killed
// (SIGKILL, by the fleet profile's secagg_kill_*) at each of the four
// stages leave rounds that still publish; too few survivors abandon the
// round, which starts over and publishes only a full session's sum; the
// gateway takes no plain update; and under central differential privacy
// the noise goes on the unmasked sum.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/sha256.h"
#include "sim/process.h"
#include "tests/json_lines.h"
#include "tests/planned_epsilon.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::secagg_e2e_test {
namespace {

using testing::RunCommand;
const std::string kSim = std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim";

std::vector<nlohmann::json> Rounds(const std::string& out) {
  return testing::ReadJsonLines(out + "/rounds.jsonl");
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

int Stage(const nlohmann::json& round, const char* field, int stage) {
  return round.at(field).at(stage).get<int>();
}

TEST(SecAgg, SixBoardsEndWithinAHundredthOfFedAvg) {
  testing::TempDir dir;
  const std::string job =
      " --clients=6 --rounds=3 --local_steps=60 --seed=7 --output=";
  int code = 0;
  const std::string plain = RunCommand(kSim + job + (dir / "plain"), &code);
  ASSERT_EQ(code, 0) << plain;
  const std::string masked = RunCommand(
      kSim + job + (dir / "secagg") + " --secure_aggregation=secagg+", &code);
  ASSERT_EQ(code, 0) << masked;
  const std::vector<nlohmann::json> a = Rounds(dir / "plain");
  const std::vector<nlohmann::json> b = Rounds(dir / "secagg");
  ASSERT_EQ(a.size(), 3u) << plain;
  ASSERT_EQ(b.size(), 3u) << masked;
  for (const nlohmann::json& r : b) {
    EXPECT_EQ(r.at("participants").get<int>(), 6) << r;
    EXPECT_EQ(r.at("secagg_boards_started").get<int>(), 6) << r;
    EXPECT_EQ(r.at("secagg_boards_survived").get<int>(), 6) << r;
    for (int s = 0; s < 4; ++s) {
      EXPECT_EQ(Stage(r, "secagg_dropped_by_stage", s), 0) << r;
      EXPECT_GE(r.at("secagg_seconds_by_stage").at(s).get<double>(), 0) << r;
    }
    // Every board sent its whole model's worth of words, masked, at least.
    EXPECT_GT(r.at("secagg_bytes_up").get<double>(), 6 * 61706 * 4.0) << r;
    EXPECT_FALSE(r.contains("dp_epsilon")) << r;
  }
  EXPECT_FALSE(a.back().contains("secagg_boards_started"));
  const double plain_accuracy = a.back().at("test_accuracy").get<double>();
  const double secagg_accuracy = b.back().at("test_accuracy").get<double>();
  std::printf("test accuracy after 3 rounds: FedAvg %.4f, SecAgg+ %.4f\n",
              plain_accuracy, secagg_accuracy);
  EXPECT_GT(plain_accuracy, 0.7) << a.back();
  EXPECT_NEAR(secagg_accuracy, plain_accuracy, 0.01) << a.back() << "\n"
                                                     << b.back();
  EXPECT_NE(FileText(dir / "secagg/report.html").find("id=\"plot-secagg\""),
            std::string::npos);
  // The gateway took every update masked: no board pushed one in the clear.
  const std::string log = FileText(dir / "secagg/logs/server.log");
  EXPECT_NE(log.find("unmasked the sum of 6 of 6 boards' updates"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("send the update masked through SecAggStep"),
            std::string::npos)
      << log;
}

// Eight boards; in round r one board kills itself just before its message
// of stage r, so each round has a dropout at another stage. The dead stay
// registered until the server's liveness period passes, so later cohorts
// draw them too and they drop before advertising; every board is every
// other's neighbour (K = 7) so that enough shares come back for each.
// Every round waits for all eight (--min_clients defaults to --clients), so
// the first has its casualty too.
TEST(SecAgg, ABoardKilledAtEachStageAndTheRoundsStillPublish) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 800);
  std::ofstream(dir / "fleet.txt")
      << "secagg_kill_round=1 secagg_kill_stage=1\n"
         "secagg_kill_round=2 secagg_kill_stage=2\n"
         "secagg_kill_round=3 secagg_kill_stage=3\n"
         "secagg_kill_round=4 secagg_kill_stage=4\n"
         "data_fraction=1\ndata_fraction=1\ndata_fraction=1\n"
         "data_fraction=1\n";
  int code = 0;
  const std::string out = RunCommand(
      absl::StrCat(kSim,
                   " --clients=8 --rounds=4 "
                   "--local_steps=5 --batch_size=16 --lr=0.02 --data=",
                   dir.path(), " --fleet_profile=", dir / "fleet.txt",
                   " --secure_aggregation=secagg+ --secagg_neighbours=7 "
                   "--secagg_threshold=3 --round_deadline=10s "
                   "--secagg_stage_deadline=4s --output=",
                   dir / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("killed (fleet profile)"), std::string::npos) << out;
  const std::vector<nlohmann::json> rounds = Rounds(dir / "out");
  ASSERT_EQ(rounds.size(), 4u) << out;
  const std::string log = FileText(dir / "out/logs/server.log");
  EXPECT_EQ(log.find("secure aggregation gave up"), std::string::npos) << log;
  for (int r = 0; r < 4; ++r) {
    const nlohmann::json& line = rounds[r];
    EXPECT_EQ(line.at("round").get<int>(), r + 1) << line;
    const int started = line.at("secagg_boards_started").get<int>();
    const int counted = line.at("secagg_boards_survived").get<int>();
    EXPECT_EQ(line.at("participants").get<int>(), counted) << line;
    // This round's casualty is lost at stage r (0-based); a board that dies
    // at unmask sent its masked input, which the sum still counts (its
    // self-mask comes back from its neighbours' shares).
    EXPECT_GE(Stage(line, "secagg_dropped_by_stage", r), 1) << line;
    int dropped = 0;
    for (int s = 0; s < 4; ++s) {
      dropped += Stage(line, "secagg_dropped_by_stage", s);
      if (s != 0 && s != r) {
        EXPECT_EQ(Stage(line, "secagg_dropped_by_stage", s), 0) << line;
      }
    }
    EXPECT_EQ(counted, started - dropped + (r == 3 ? 1 : 0)) << line;
    // Every live board took part: the dead ones are the only dropouts.
    EXPECT_EQ(counted, 8 - r - (r == 3 ? 0 : 1)) << line;
    EXPECT_TRUE(line.contains("test_accuracy")) << line;
  }
}

// Four boards with neighbours 3 and threshold 3: two killed before their
// masked inputs leave the session below its threshold, so round 1 is given
// up with the reason, never published, and starts over with a new session
// (which, with the dead still drawn until the liveness period passes, is
// given up too: the job is stopped after 45 s).
TEST(SecAgg, BelowTheThresholdTheRoundIsAbandonedNotPublished) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  std::ofstream(dir / "fleet.txt")
      << "secagg_kill_round=1 secagg_kill_stage=3\n"
         "secagg_kill_round=1 secagg_kill_stage=3\n"
         "data_fraction=1\ndata_fraction=1\n";
  int code = 0;
  const std::string out = RunCommand(
      absl::StrCat("timeout -s TERM 45 ", kSim,
                   " --clients=4 --rounds=1 "
                   "--local_steps=5 --batch_size=16 --lr=0.02 --data=",
                   dir.path(), " --fleet_profile=", dir / "fleet.txt",
                   " --secure_aggregation=secagg+ --secagg_neighbours=3 "
                   "--secagg_threshold=3 --round_deadline=10s "
                   "--secagg_stage_deadline=4s --output=",
                   dir / "out"),
      &code);
  const std::string log = FileText(dir / "out/logs/server.log");
  const size_t gave_up = log.find(
      "abandoned at stage 'masked input': 2 of 4 boards survived it (2 "
      "dropped in it, 0 before), below the threshold t=3");
  ASSERT_NE(gave_up, std::string::npos) << out << log;
  EXPECT_NE(log.find("the round starts over with the same global model"),
            std::string::npos)
      << log;
  // A new session for the round's next attempt.
  EXPECT_NE(log.find("round 1: secure aggregation (SecAgg+) over", gave_up),
            std::string::npos)
      << log;
  // Nothing was published from a session that could not unmask.
  EXPECT_TRUE(Rounds(dir / "out").empty()) << out;
  EXPECT_EQ(log.find("unmasked the sum"), std::string::npos) << log;
}

// Under mutual TLS every board signs its keys with its fleet key; one whose
// signature does not match its certificate is refused by the gateway and
// each round goes on without it (at once: the key stage does not wait for
// a refused board).
TEST(SecAgg, UnderMutualTlsAForgedKeySignatureIsRefused) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  std::ofstream(dir / "fleet.txt")
      << "data_fraction=1\ndata_fraction=1\ndata_fraction=1\n"
         "secagg_forge_signature=1\n";
  int code = 0;
  const std::string out = RunCommand(
      absl::StrCat(kSim,
                   " --clients=4 --rounds=2 --tls "
                   "--local_steps=5 --batch_size=16 --lr=0.02 --data=",
                   dir.path(), " --fleet_profile=", dir / "fleet.txt",
                   " --secure_aggregation=secagg+ --output=", dir / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  const std::string log = FileText(dir / "out/logs/server.log");
  EXPECT_NE(log.find("keys signed with the boards' fleet certificates"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("key signature does not match its certificate"),
            std::string::npos)
      << log;
  const std::vector<nlohmann::json> rounds = Rounds(dir / "out");
  ASSERT_EQ(rounds.size(), 2u) << out;
  for (const nlohmann::json& r : rounds) {
    EXPECT_EQ(r.at("secagg_boards_started").get<int>(), 4) << r;
    EXPECT_EQ(r.at("secagg_boards_survived").get<int>(), 3) << r;
    EXPECT_EQ(Stage(r, "secagg_dropped_by_stage", 0), 1) << r;
  }
}

// Central differential privacy with secure aggregation: each board clips
// its update to the round's L2 bound and weighs 1, the gateway adds the
// noise to the unmasked sum. With the same noise seed and cohort (q = 1),
// round 1's model is the plain DP job's (the same clipped updates, the same
// noise, up to the quantisation; a plain job with another noise seed is
// the yardstick of "the same"), every round's epsilon is fedberry-dp's,
// and under adaptive clipping the bound moves on the count of clipped
// boards, which the gateway learns only as a sum.
TEST(SecAgg, UnderCentralDpTheNoiseGoesOnTheUnmaskedSum) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 400);
  const std::string job = absl::StrCat(
      kSim,
      " --clients=4 --rounds=3 --fraction=1 --local_steps=10 "
      "--batch_size=16 --lr=0.02 --dp_noise_multiplier=1.2 --dp_clip=0.05 "
      "--dp_adaptive_clip=true --data=",
      dir.path(), " --output=");
  int code = 0;
  const std::string plain =
      RunCommand(job + (dir / "plain") + " --dp_noise_seed=3", &code);
  ASSERT_EQ(code, 0) << plain;
  const std::string other =
      RunCommand(job + (dir / "other") + " --dp_noise_seed=4", &code);
  ASSERT_EQ(code, 0) << other;
  const std::string masked =
      RunCommand(job + (dir / "secagg") +
                     " --dp_noise_seed=3 --secure_aggregation=secagg+",
                 &code);
  ASSERT_EQ(code, 0) << masked;
  const std::vector<nlohmann::json> a = Rounds(dir / "plain");
  const std::vector<nlohmann::json> c = Rounds(dir / "other");
  ASSERT_FALSE(c.empty()) << other;
  const std::vector<nlohmann::json> b = Rounds(dir / "secagg");
  ASSERT_EQ(a.size(), 3u) << plain;
  ASSERT_EQ(b.size(), 3u) << masked;
  for (const nlohmann::json& r : b) {
    EXPECT_EQ(r.at("secagg_boards_survived").get<int>(), 4) << r;
    EXPECT_EQ(r.at("participants").get<int>(), 4) << r;
    const double clipped = r.at("dp_clipped_fraction").get<double>();
    EXPECT_TRUE(clipped >= 0 && clipped <= 1) << r;
    EXPECT_NEAR(r.at("dp_epsilon").get<double>(),
                testing::PlannedEpsilon(FEDBERRY_BIN_DIR, 1.0, 1.2,
                                        r.at("dp_steps").get<int64_t>()),
                1e-9 * r.at("dp_epsilon").get<double>())
        << r;
  }
  // Round 1: the same bound, the same clipped count, the same noisy model.
  EXPECT_EQ(b[0].at("dp_clip").get<double>(), 0.05);
  EXPECT_EQ(b[0].at("dp_clipped_fraction"), a[0].at("dp_clipped_fraction"));
  EXPECT_EQ(b[1].at("dp_clip"), a[1].at("dp_clip")) << "the bound moved alike";
  const double plain_loss = a[0].at("test_loss").get<double>();
  const double secagg_loss = b[0].at("test_loss").get<double>();
  const double other_loss = c[0].at("test_loss").get<double>();
  std::printf(
      "round 1 test loss under DP: plain %.9f, SecAgg+ %.9f; plain with "
      "another noise seed %.9f\n",
      plain_loss, secagg_loss, other_loss);
  ASSERT_GT(std::abs(other_loss - plain_loss), 0) << "the yardstick is 0";
  EXPECT_LT(std::abs(secagg_loss - plain_loss),
            std::abs(other_loss - plain_loss) / 100);
  const std::string log = FileText(dir / "secagg/logs/server.log");
  EXPECT_NE(log.find("each board clips to L2 norm 0.05 and weighs 1"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("unmasked the sum of 4 of 4 boards' updates"),
            std::string::npos)
      << log;
}

// Tiers: each site gateway runs its own boards' sessions and forwards only
// their sum to the root, weighted by its boards' samples (the weights came
// masked too); the root, without secure aggregation, counts both gateways.
// Under a root with central DP the sites' sums are the clipped sums the
// root noises, its boards clipping to the root's bound.
TEST(SecAgg, SiteGatewaysRunTheirOwnSessionsAndForwardOnlyTheSum) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 600);
  const std::string job = absl::StrCat(
      kSim,
      " --tiers=2 --gateways=2 --clients=6 --rounds=2 --local_steps=10 "
      "--batch_size=16 --lr=0.02 --secure_aggregation=secagg+ --data=",
      dir.path(), " --output=");
  for (const std::string dp :
       {"", " --dp_noise_multiplier=1.2 --dp_clip=0.05 --fraction=1"}) {
    const std::string out = dir / (dp.empty() ? "plain-root" : "dp-root");
    int code = 0;
    const std::string log = RunCommand(job + out + dp, &code);
    ASSERT_EQ(code, 0) << log;
    const std::vector<nlohmann::json> rounds = Rounds(out);
    ASSERT_EQ(rounds.size(), 2u) << log;
    for (const nlohmann::json& r : rounds) {
      EXPECT_EQ(r.at("participants").get<int>(), 2) << r;
      EXPECT_FALSE(r.contains("secagg_boards_started")) << r;
      EXPECT_EQ(r.contains("dp_epsilon"), !dp.empty()) << r;
    }
    for (int g = 0; g < 2; ++g) {
      const std::string site = absl::StrCat(out, "/gateway-", g);
      const std::vector<nlohmann::json> site_rounds = Rounds(site);
      ASSERT_GE(site_rounds.size(), 2u) << log;
      for (const nlohmann::json& r : site_rounds) {
        EXPECT_EQ(r.at("secagg_boards_survived").get<int>(), 3) << r;
      }
      const std::string site_log =
          FileText(absl::StrCat(out, "/logs/gateway-", g, ".log"));
      EXPECT_NE(site_log.find("unmasked the sum of 3 of 3 boards' updates"),
                std::string::npos)
          << site_log;
      EXPECT_EQ(site_log.find("gave no model"), std::string::npos) << site_log;
      if (!dp.empty()) {
        EXPECT_NE(site_log.find("each board clips to L2 norm 0.05"),
                  std::string::npos)
            << site_log;
      }
    }
    // Each site's update weighs its three boards' 100 declared samples;
    // under DP each board weighs 1 (the root sums unweighted).
    for (const nlohmann::json& c :
         testing::ReadJsonLines(out + "/clients.jsonl")) {
      EXPECT_EQ(c.at("num_samples").get<int>(), dp.empty() ? 300 : 3) << c;
    }
    const std::string root_log = FileText(out + "/logs/server.log");
    EXPECT_EQ(root_log.find("secure aggregation (SecAgg+)"), std::string::npos)
        << root_log;
  }
}

// A job of real processes started one by one: fedberry-server and
// fedberry-emulated-client boards on the tiny data set, so a test can kill
// and restart boards and give each its own instruments.
class ProcessJob : public ::testing::Test {
 protected:
  // The server of a `boards`-board job of `rounds` rounds.
  void StartServer(int boards, int rounds) {
    boards_ = boards;
    testing::WriteTinyDataset(dir_ / "data", 600);
    std::filesystem::create_directories(out_);
    absl::StatusOr<sim::Process> server = sim::Process::Spawn(
        {bin_ + "/fedberry-server", "--listen=127.0.0.1:0", "--output=" + out_,
         absl::StrCat("--rounds=", rounds),
         absl::StrCat("--min_clients=", boards),
         absl::StrCat("--min_clients_to_start=", boards), "--local_steps=5",
         "--batch_size=16", "--model=lenet5",
         "--eval_data=", "--round_deadline=30s", "--secagg_stage_deadline=5s",
         "--secure_aggregation=secagg+"},
        out_ + "/server.log");
    ASSERT_TRUE(server.ok()) << server.status();
    server_.emplace(*std::move(server));
    for (int i = 0; i < 3000 && address_.empty() && !server_->Poll(); ++i) {
      std::ifstream(out_ + "/server.addr") >> address_;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(address_.empty()) << FileText(out_ + "/server.log");
  }

  // Board `i`, its log `board-<i><log_suffix>.log`, with `extra` flags.
  sim::Process Board(int i, const std::vector<std::string>& extra,
                     const std::string& log_suffix = "") {
    std::vector<std::string> argv = {
        bin_ + "/fedberry-emulated-client",
        "--server=" + address_,
        "--data=" + (dir_ / "data"),
        absl::StrCat("--partition_index=", i),
        absl::StrCat("--partition_count=", boards_),
        absl::StrCat("--name=board-", i),
        absl::StrCat("--checkpoint_dir=", out_, "/ckpt-", i),
        "--max_backoff=300ms",
        "--give_up_after=120s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    absl::StatusOr<sim::Process> p = sim::Process::Spawn(
        argv, absl::StrCat(out_, "/board-", i, log_suffix, ".log"));
    EXPECT_TRUE(p.ok()) << p.status();
    return *std::move(p);
  }

  // Its exit code (-1: still running after 2 minutes, then killed).
  static int Wait(sim::Process& p) {
    for (int i = 0; i < 12000; ++i) {
      if (auto e = p.Poll()) return e->code;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    p.Signal(SIGKILL);
    return -1;
  }

  testing::TempDir dir_;
  const std::string out_ = dir_ / "out";
  const std::string bin_ = FEDBERRY_BIN_DIR;
  int boards_ = 0;
  std::optional<sim::Process> server_;
  std::string address_;
};

using SecAggProcesses = ProcessJob;

// Each board writes its plain words before masking them
// (--secagg_words_dir, a test instrument); the server logs its unmasked
// sum's SHA-256. Every round's sum is exactly the plain sum mod 2^32 of the
// six boards' clipped, quantised words.
TEST_F(SecAggProcesses, TheUnmaskedSumIsExactlyThePlainSumOfTheWords) {
  StartServer(6, 2);
  const std::string words = dir_ / "words";
  std::filesystem::create_directories(words);
  std::vector<sim::Process> boards;
  for (int i = 0; i < 6; ++i) {
    boards.push_back(Board(i, {"--secagg_words_dir=" + words}));
  }
  for (sim::Process& b : boards) EXPECT_EQ(Wait(b), 0);
  ASSERT_EQ(Wait(*server_), 0);
  const std::string log = FileText(out_ + "/server.log");
  // "... (weights summing to W; session S, sum sha256 H)"
  int checked = 0;
  for (size_t at = log.find("session round-"); at != std::string::npos;
       at = log.find("session round-", at + 1)) {
    const size_t comma = log.find(',', at);
    const std::string session = log.substr(at + 8, comma - at - 8);
    const size_t hash = log.find("sum sha256 ", comma) + 11;
    std::vector<uint32_t> sum;
    for (int b = 0; b < 6; ++b) {
      const std::string bytes =
          FileText(absl::StrCat(words, "/", session, ".", b, ".words"));
      ASSERT_FALSE(bytes.empty()) << session << " board " << b;
      sum.resize(bytes.size() / 4, 0);
      for (size_t i = 0; i < sum.size(); ++i) {
        uint32_t w = 0;
        for (int k = 0; k < 4; ++k) {
          w |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[4 * i + k]))
               << (8 * k);
        }
        sum[i] += w;  // mod 2^32, the 32-bit field's sum
      }
    }
    std::string summed;
    for (uint32_t w : sum) {
      for (int k = 0; k < 4; ++k)
        summed.push_back(static_cast<char>(w >> (8 * k)));
    }
    EXPECT_EQ(runtime::Sha256Hex(summed), log.substr(hash, 64)) << session;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << log;
}

// A board killed after its masked input left (it SIGKILLs itself just
// before its unmask message) and started again on the same checkpoint
// folder: its input still counts (its neighbours' shares rebuild its
// self-mask; five boards, K = 4, t = 3, so every secret keeps 3 shares),
// its session state on disk says it masked, and the restored board sends
// no second masked input: it sits the rest of that round out and takes
// part in the next one.
TEST_F(SecAggProcesses, ABoardRestoredAfterItsMaskedInputNeverSendsASecond) {
  StartServer(5, 2);
  std::vector<sim::Process> boards;
  boards.push_back(Board(0, {"--secagg_kill_at=1:4"}, "-killed"));
  for (int i = 1; i < 5; ++i) boards.push_back(Board(i, {}));
  EXPECT_EQ(Wait(boards[0]), 128 + SIGKILL);
  // What the board left on disk: its round-1 session, past masking.
  int states = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(out_ + "/ckpt-0/secagg")) {
    states += e.path().filename().string().rfind("secagg-round-1-", 0) == 0;
  }
  EXPECT_EQ(states, 1);
  boards[0] = Board(0, {});  // restored: the same checkpoint folder
  for (sim::Process& b : boards) EXPECT_EQ(Wait(b), 0);
  EXPECT_EQ(Wait(*server_), 0);
  const std::vector<nlohmann::json> rounds = Rounds(out_);
  ASSERT_EQ(rounds.size(), 2u) << FileText(out_ + "/server.log");
  // Round 1 counts the killed board's input; it dropped at unmask.
  EXPECT_EQ(rounds[0].at("secagg_boards_survived").get<int>(), 5) << rounds[0];
  EXPECT_EQ(Stage(rounds[0], "secagg_dropped_by_stage", 3), 1) << rounds[0];
  EXPECT_EQ(rounds[1].at("secagg_boards_survived").get<int>(), 5) << rounds[1];
  // The restored board masked only round 2's session.
  const std::string restored = out_ + "/board-0.log";
  EXPECT_EQ(testing::CountLines(restored, "round 1: trained"), 0)
      << FileText(restored);
  EXPECT_EQ(testing::CountLines(restored, "sending the update masked"), 1)
      << FileText(restored);
  const std::string log = FileText(out_ + "/server.log");
  EXPECT_EQ(log.find("already sent its masked input"), std::string::npos)
      << log;
}

}  // namespace
}  // namespace fedberry::secagg_e2e_test
