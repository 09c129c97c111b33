// Tiers of gateways with real processes: site gateways (fedberry-server
// --upstream) between the server and the boards. FedAvg carries over the
// tiers when weights do, so two tiers end with the flat federation's model
// to float rounding; a gateway and the server killed mid-job resume from
// their checkpoints. Under a root with differential privacy a gateway
// forwards its boards' clipped sum and the root accounts.
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/process.h"
#include "tests/planned_epsilon.h"
#include "tests/saved_model.h"
#include "tests/test_files.h"

namespace fedberry::tiers_test {
namespace {

using sim::Process;
const std::string kBin = FEDBERRY_BIN_DIR;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int Lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += !line.empty();
  return n;
}

sim::ExitInfo WaitExit(Process& p, int seconds = 300) {
  for (int i = 0; i < seconds * 20 && !p.Poll(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!p.exit()) {
    p.Signal(SIGKILL);
    while (!p.Poll()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return *p.exit();
}

std::string AddressOf(const std::string& out, Process& p) {
  for (int i = 0; i < 1200; ++i) {
    std::ifstream in(out + "/server.addr");
    std::string addr;
    if (in >> addr) return addr;
    if (p.Poll()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

// Waits until `path` has at least `n` lines; false if `p` ended first.
bool WaitForLines(const std::string& path, int n, Process& p) {
  for (int i = 0; i < 6000; ++i) {
    if (Lines(path) >= n) return true;
    if (p.Poll()) return Lines(path) >= n;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

Process Spawn(const std::vector<std::string>& argv, const std::string& log) {
  auto p = Process::Spawn(argv, log);
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

// Sets an environment variable for this process and the processes it
// starts, and restores it.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The model a federation's output folder checkpointed after `round`.
std::vector<torch::Tensor> ModelAfterRound(const std::string& out, int round) {
  for (const auto& e :
       std::filesystem::directory_iterator(out + "/checkpoints")) {
    std::ifstream state(e.path() / "state.json");
    if (!state) continue;
    if (nlohmann::json::parse(state, nullptr, false).value("next_round", 0) ==
        round + 1) {
      return testing::ReadSavedModel(e.path() / "model.pt");
    }
  }
  ADD_FAILURE() << "no checkpoint of round " << round << " in " << out;
  return {};
}

// The same 3 boards, data and seeds, once joined to the server and once
// through two gateways (of two boards and of one); the gateways join as one
// board each, weighing their boards' samples together.
//
// Every process runs on reference kernels (runtime/compute_kernels.h), so
// each run's bits are the same on every x86-64 CPU and the bounds below
// hold wherever the test runs.
// - Round 1: both federations average the same boards' updates, bit for
//   bit; only the grouping differs (a gateway's mean is rounded to a float,
//   then averaged again). So the models agree to two floats' rounding of the
//   largest value involved, while weighing the gateways equally instead of
//   by their samples ends far away.
// - Round 2 starts from those slightly different models, so the final
//   models agree only to what training makes of rounding: under 1e-5 here.
TEST(Tiers, ATwoTierFederationEndsWithTheFlatFederationsModel) {
  testing::TempDir dir;
  ScopedEnvironment kernels("FEDBERRY_KERNELS", "reference");
  const std::vector<std::string> job = {"--clients=3", "--rounds=2",
                                        "--local_steps=20"};
  for (const std::string tiers : {"1", "2"}) {
    std::vector<std::string> argv = {kBin + "/fedberry-sim", "--tiers=" + tiers,
                                     "--output=" + (dir / ("tiers-" + tiers))};
    argv.insert(argv.end(), job.begin(), job.end());
    Process sim = Spawn(argv, dir / ("sim-" + tiers + ".log"));
    ASSERT_EQ(WaitExit(sim).code, 0)
        << ReadAll(dir / ("sim-" + tiers + ".log"));
  }
  const std::string flat = dir / "tiers-1", tiered = dir / "tiers-2";
  EXPECT_NE(ReadAll(tiered + "/logs/server.log").find("a gateway for 2 boards"),
            std::string::npos);
  EXPECT_NE(ReadAll(flat + "/logs/client-0.log").find("compute: reference"),
            std::string::npos);
  for (int g = 0; g < 2; ++g) {
    const std::string gateway = tiered + "/gateway-" + std::to_string(g);
    EXPECT_EQ(Lines(gateway + "/rounds.jsonl"), 2) << gateway;
  }

  const auto flat1 = ModelAfterRound(flat, 1),
             two1 = ModelAfterRound(tiered, 1);
  const auto g0 = ModelAfterRound(tiered + "/gateway-0", 1);
  const auto g1 = ModelAfterRound(tiered + "/gateway-1", 1);
  ASSERT_FALSE(flat1.empty());
  ASSERT_EQ(two1.size(), flat1.size());
  ASSERT_EQ(g0.size(), flat1.size());
  ASSERT_EQ(g1.size(), flat1.size());
  const double eps = std::numeric_limits<float>::epsilon();
  double round1 = 0, equal_weights = 0;
  for (size_t i = 0; i < flat1.size(); ++i) {
    const torch::Tensor scale =
        at::maximum(flat1[i].abs(), at::maximum(g0[i].abs(), g1[i].abs()));
    const torch::Tensor off = (two1[i] - flat1[i]).abs();
    EXPECT_TRUE((off <= 2 * eps * scale).all().item<bool>()) << "tensor " << i;
    round1 = std::max(round1, off.max().item<double>());
    equal_weights =
        std::max(equal_weights,
                 ((g0[i] + g1[i]) / 2 - flat1[i]).abs().max().item<double>());
  }
  std::printf(
      "round 1: largest difference from the flat model %g; with the gateways "
      "weighed equally %g\n",
      round1, equal_weights);
  EXPECT_GT(equal_weights, 1e-3);

  const auto flat2 = testing::ReadSavedModel(flat + "/global_model.pt");
  const auto two2 = testing::ReadSavedModel(tiered + "/global_model.pt");
  const auto one_gateway =
      testing::ReadSavedModel(tiered + "/gateway-0/global_model.pt");
  ASSERT_EQ(flat2.size(), two2.size());
  ASSERT_EQ(one_gateway.size(), flat2.size());
  double largest = 0, farthest_gateway = 0;
  for (size_t i = 0; i < flat2.size(); ++i) {
    largest =
        std::max(largest, (flat2[i] - two2[i]).abs().max().item<double>());
    farthest_gateway =
        std::max(farthest_gateway,
                 (flat2[i] - one_gateway[i]).abs().max().item<double>());
  }
  std::printf(
      "round 2: largest difference from the flat model: %g (one gateway's "
      "own last average: %g)\n",
      largest, farthest_gateway);
  EXPECT_LT(largest, 1e-5);
  // One gateway's average alone is not the federation's: the comparison
  // can tell models apart.
  EXPECT_GT(farthest_gateway, 1e-3);
}

// Training part of the model through gateways: they serve the parent's
// plan, trainable set included, so the boards send the head only and so do
// the gateways; the job's frozen tensors end as they started.
TEST(Tiers, ATwoTierFederationTrainsPartOfTheModel) {
  testing::TempDir dir;
  const std::string out = dir / "tiers";
  Process sim = Spawn({kBin + "/fedberry-sim", "--tiers=2", "--clients=3",
                       "--rounds=2", "--local_steps=20", "--seed=4",
                       "--trainable=fc3\\..*", "--output=" + out},
                      dir / "sim.log");
  ASSERT_EQ(WaitExit(sim).code, 0) << ReadAll(dir / "sim.log");
  const auto initial = testing::InitialZooModel("lenet5", 4);
  const auto last = testing::ReadSavedNamedModel(out + "/global_model.pt");
  ASSERT_EQ(last.size(), initial.size());
  for (const auto& [name, tensor] : initial) {
    EXPECT_EQ(last.at(name).equal(tensor), name.rfind("fc3.", 0) != 0) << name;
  }
  EXPECT_NE(ReadAll(out + "/logs/server.log").find("a gateway for 2 boards"),
            std::string::npos);
}

// A gateway SIGKILLed while its boards train, then the server SIGKILLed a
// round later: each restarts on its address from its checkpoint (the
// gateway rejoins its parent under its name; its boards and the gateway
// retry), and the job completes every round.
TEST(Tiers, AGatewayAndTheServerKilledMidJobResumeAndTheJobCompletes) {
  testing::TempDir dir;
  const std::string central = dir / "central";
  const std::string site = dir / "site";
  const auto central_args = [&](const std::string& listen) {
    return std::vector<std::string>{
        kBin + "/fedberry-server",  "--listen=" + listen,
        "--site_gateways=site-a",   "--rounds=4",
        "--local_steps=40",         "--min_clients=1",
        "--min_clients_to_start=1", "--eval_data=",
        "--output=" + central};
  };
  const auto site_args = [&](const std::string& upstream,
                             const std::string& listen) {
    return std::vector<std::string>{
        kBin + "/fedberry-server", "--upstream=" + upstream,
        "--upstream_name=site-a",  "--listen=" + listen,
        "--min_clients=2",         "--min_clients_to_start=2",
        "--output=" + site};
  };
  Process server = Spawn(central_args("127.0.0.1:0"), dir / "central-1.log");
  const std::string address = AddressOf(central, server);
  ASSERT_FALSE(address.empty()) << ReadAll(dir / "central-1.log");
  Process gateway =
      Spawn(site_args(address, "127.0.0.1:0"), dir / "site-1.log");
  const std::string site_address = AddressOf(site, gateway);
  ASSERT_FALSE(site_address.empty()) << ReadAll(dir / "site-1.log");
  std::vector<Process> boards;
  for (int i = 0; i < 2; ++i) {
    boards.push_back(
        Spawn({kBin + "/fedberry-client", "--server=" + site_address,
               "--partition_index=" + std::to_string(i), "--partition_count=2",
               "--name=board-" + std::to_string(i), "--give_up_after=120s",
               "--checkpoint_dir=" + (dir / ("board-" + std::to_string(i)))},
              dir / ("board-" + std::to_string(i) + ".log")));
  }
  // Round 1 done: the gateway dies while its boards train round 2.
  ASSERT_TRUE(WaitForLines(central + "/rounds.jsonl", 1, server))
      << ReadAll(dir / "central-1.log");
  gateway.Signal(SIGKILL);
  WaitExit(gateway);
  gateway = Spawn(site_args(address, site_address), dir / "site-2.log");
  // Round 2 done: the server dies.
  ASSERT_TRUE(WaitForLines(central + "/rounds.jsonl", 2, server))
      << ReadAll(dir / "central-1.log");
  server.Signal(SIGKILL);
  WaitExit(server);
  server = Spawn(central_args(address), dir / "central-2.log");

  EXPECT_EQ(WaitExit(server).code, 0) << ReadAll(dir / "central-2.log");
  EXPECT_EQ(WaitExit(gateway).code, 0) << ReadAll(dir / "site-2.log");
  for (auto& b : boards) EXPECT_EQ(WaitExit(b).code, 0);
  EXPECT_EQ(Lines(central + "/rounds.jsonl"), 4)
      << ReadAll(central + "/rounds.jsonl");
  EXPECT_NE(
      ReadAll(dir / "site-2.log").find("resuming the job from checkpoint"),
      std::string::npos)
      << ReadAll(dir / "site-2.log");
  EXPECT_NE(
      ReadAll(dir / "central-2.log").find("resuming the job from checkpoint"),
      std::string::npos)
      << ReadAll(dir / "central-2.log");
  EXPECT_NE(ReadAll(dir / "central-2.log").find("round 4/4 done"),
            std::string::npos);
}

// Differential privacy through a site gateway: a root under DP with one
// board of its own and a gateway of two boards. The gateway's boards clip
// to the root's bound, the gateway draws them with the root's q and
// forwards their clipped sum and its count with no noise; the root noises
// the total once and charges every round as fedberry-dp computes it for the
// logged parameters. The gateway is in every draw (its boards are drawn at
// the site), so no draw is too small and every round is one charge.
TEST(Tiers, ADpRootNoisesAndAccountsAGatewaysClippedSums) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir / "data", 300);
  const std::string root = dir / "root", site = dir / "site";
  Process server =
      Spawn({kBin + "/fedberry-server", "--listen=127.0.0.1:0", "--rounds=3",
             "--local_steps=10", "--batch_size=16", "--lr=0.02",
             "--fraction=0.5", "--min_clients=1", "--min_clients_to_start=2",
             "--dp_noise_multiplier=1.2", "--dp_clip=0.05", "--dp_noise_seed=3",
             "--site_gateways=site-a", "--eval_data=", "--output=" + root},
            dir / "root.log");
  const std::string address = AddressOf(root, server);
  ASSERT_FALSE(address.empty()) << ReadAll(dir / "root.log");
  Process gateway =
      Spawn({kBin + "/fedberry-server", "--upstream=" + address,
             "--upstream_name=site-a", "--listen=127.0.0.1:0",
             "--min_clients=1", "--min_clients_to_start=2", "--output=" + site},
            dir / "site.log");
  const std::string site_address = AddressOf(site, gateway);
  ASSERT_FALSE(site_address.empty()) << ReadAll(dir / "site.log");
  std::vector<Process> boards;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "board-" + std::to_string(i);
    boards.push_back(Spawn(
        {kBin + "/fedberry-client",
         "--server=" + (i == 0 ? address : site_address),
         "--data=" + (dir / "data"), "--partition_index=" + std::to_string(i),
         "--partition_count=3", "--name=" + name, "--give_up_after=120s",
         "--checkpoint_dir=" + (dir / name)},
        dir / (name + ".log")));
  }
  ASSERT_EQ(WaitExit(server).code, 0) << ReadAll(dir / "root.log");
  EXPECT_EQ(WaitExit(gateway).code, 0) << ReadAll(dir / "site.log");
  for (auto& b : boards) EXPECT_EQ(WaitExit(b).code, 0);

  const std::string root_log = ReadAll(dir / "root.log");
  EXPECT_NE(root_log.find("a gateway for 2 boards"), std::string::npos)
      << root_log;
  std::ifstream lines(root + "/rounds.jsonl");
  std::string line;
  int rounds = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json r = nlohmann::json::parse(line);
    ++rounds;
    const int64_t steps = r.at("dp_steps").get<int64_t>();
    EXPECT_EQ(steps, r.at("round").get<int64_t>()) << r;
    EXPECT_EQ(r.at("dp_sampling_rate").get<double>(), 0.5);
    EXPECT_EQ(r.at("dp_noise_multiplier").get<double>(), 1.2);
    EXPECT_EQ(r.at("dp_clip").get<double>(), 0.05);
    EXPECT_EQ(r.at("dp_delta").get<double>(), 1e-5);
    const double planned = testing::PlannedEpsilon(kBin, 0.5, 1.2, steps);
    EXPECT_NEAR(r.at("dp_epsilon").get<double>(), planned, 1e-9 * planned) << r;
  }
  EXPECT_EQ(rounds, 3);
  // The gateway forwards clipped sums, adds no noise and accounts nothing.
  const std::string site_log = ReadAll(dir / "site.log");
  EXPECT_NE(site_log.find("forwarding the clipped sum of"), std::string::npos)
      << site_log;
  EXPECT_NE(site_log.find("no noise added here"), std::string::npos);
  EXPECT_EQ(site_log.find("privacy: epsilon"), std::string::npos);
  EXPECT_EQ(ReadAll(site + "/rounds.jsonl").find("dp_epsilon"),
            std::string::npos);
}

}  // namespace
}  // namespace fedberry::tiers_test
