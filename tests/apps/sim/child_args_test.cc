// The command lines fedberry-sim gives its children, built from plans, and
// the plans it refuses.
#include "apps/sim/child_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "apps/sim/sim_plan.h"
#include "runtime/partition.h"

namespace fedberry::sim::child_args_test {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

SimPlan Plan() {
  SimPlan plan;
  plan.job.data = "/data";
  plan.output.dir = "/out";
  plan.output.bin_dir = "/bin";
  return plan;
}

SimPorts Ports(int gateways = 0) {
  SimPorts ports;
  ports.server = 5000;
  for (int g = 0; g < gateways; ++g) ports.gateways.push_back(6000 + g);
  return ports;
}

LocalPki Pki() {
  LocalPki pki;
  pki.ca_cert = "/pki/ca.crt";
  pki.server_cert = "/pki/server.crt";
  pki.server_key = "/pki/server.key";
  for (int i = 0; i < 4; ++i) {
    pki.board_certs.push_back("/pki/board-" + std::to_string(i) + ".crt");
    pki.board_keys.push_back("/pki/board-" + std::to_string(i) + ".key");
  }
  return pki;
}

// Whether some argument starts with `prefix` (a flag given any value).
bool HasFlag(const std::vector<std::string>& argv, const std::string& prefix) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) {
    return a.rfind(prefix, 0) == 0;
  });
}

// Flags appear only where the plan differs from the child's own defaults:
// the server's (apps::ServerFlagDefaults) and the board's
// (client::ClientFlagDefaults).
TEST(ServerArgs, DefaultPlanGivesWhereTheJobDiffersFromTheServersDefaults) {
  EXPECT_THAT(
      ServerArgs(Plan(), Ports(), nullptr),
      ElementsAre("/bin/fedberry-server", "--eval_data=/data",
                  "--min_clients=4", "--min_clients_to_start=4",
                  "--listen=127.0.0.1:5000", "--output=/out", "--threads=1"));
}

TEST(ServerArgs, TheSimulatorsJobFlagsReachTheServer) {
  SimPlan plan = Plan();
  apps::ServerConfig& job = plan.server;
  job.rounds.rounds = 7;
  job.rounds.fraction = 0.5;
  job.plan.local_epochs = 2;
  job.plan.local_steps = 30;
  job.plan.batch_size = 16;
  job.plan.lr = 0.1;
  job.plan.momentum = 0.5;
  job.rounds.round_deadline = absl::Minutes(3);
  job.plan.model = "resnet8";
  job.plan.seed = 9;
  job.planner.planner = "greedy";
  job.planner.max_factor = 2;
  job.planner.data_moves = true;
  job.rounds.overlap_evaluation = false;
  const auto argv = ServerArgs(plan, Ports(), nullptr);
  for (const char* flag :
       {"--rounds=7", "--fraction=0.5", "--local_epochs=2", "--local_steps=30",
        "--batch_size=16", "--lr=0.1", "--momentum=0.5", "--round_deadline=3m",
        "--model=resnet8", "--seed=9", "--planner=greedy",
        "--planner_max_factor=2", "--data_moves=true",
        "--overlap_evaluation=false"}) {
    EXPECT_THAT(argv, Contains(flag));
  }
}

TEST(ServerArgs, PassThroughFlagsAppearOnlyWhenNotDefault) {
  SimPlan plan = Plan();
  plan.server.strategy.name = "fedadam";
  plan.server.plan.update_encoding = "int8";
  plan.server.transport.metrics_listen = "9464";
  plan.server.plan.skip_bad_rows = true;
  plan.job.eval_data = "";
  plan.job.min_clients = 3;
  const auto argv = ServerArgs(plan, Ports(), nullptr);
  const auto base = ServerArgs(Plan(), Ports(), nullptr);
  ASSERT_EQ(argv.size(), base.size() + 4);
  for (const char* flag :
       {"--strategy=fedadam", "--update_encoding=int8", "--metrics_listen=9464",
        "--skip_bad_rows=true", "--eval_data=", "--min_clients=3"}) {
    EXPECT_THAT(argv, Contains(flag));
  }
  for (const char* empty : {"--optimizer=", "--dp_clip=", "--mode=", "--tau=",
                            "--trainable=", "--tls_cert=", "--insecure"}) {
    EXPECT_FALSE(HasFlag(argv, empty)) << empty;
  }
}

TEST(ServerArgs, TlsAddsTheServersCertificates) {
  const LocalPki pki = Pki();
  const auto argv = ServerArgs(Plan(), Ports(), &pki);
  EXPECT_THAT(argv, Contains("--tls_cert=/pki/server.crt"));
  EXPECT_THAT(argv, Contains("--tls_key=/pki/server.key"));
  EXPECT_THAT(argv, Contains("--client_ca=/pki/ca.crt"));
  EXPECT_THAT(argv, Not(Contains("--insecure")));
}

TEST(ServerArgs, ShapedLinksListenBeyondLoopbackInPlaintext) {
  SimPlan plan = Plan();
  plan.fleet.boards.resize(2);
  plan.fleet.boards[1].bandwidth_mbit = 8;
  const auto argv = ServerArgs(plan, Ports(), nullptr);
  EXPECT_THAT(argv, Contains("--listen=0.0.0.0:5000"));
  // Two boards: the server's default --min_clients.
  EXPECT_FALSE(HasFlag(argv, "--min_clients="));
  EXPECT_THAT(argv, Contains("--insecure=true"));
}

TEST(ClientArgs, TlsAddsTheBoardsOwnCertificate) {
  SimPlan plan = Plan();
  plan.transport.tls = true;
  const LocalPki pki = Pki();
  const auto argv = ClientArgs(plan, 2, Ports(), nullptr, &pki);
  EXPECT_THAT(argv, Contains("--tls_ca=/pki/ca.crt"));
  EXPECT_THAT(argv, Contains("--tls_cert=/pki/board-2.crt"));
  EXPECT_THAT(argv, Contains("--tls_key=/pki/board-2.key"));
  EXPECT_THAT(argv, Contains("--tls_server_name=localhost"));
  EXPECT_THAT(argv, Not(Contains("--insecure")));
}

TEST(ClientArgs, DefaultBoardDialsTheServerOnLoopback) {
  const auto argv = ClientArgs(Plan(), 1, Ports(), nullptr, nullptr);
  EXPECT_THAT(
      argv,
      ElementsAre("/bin/fedberry-emulated-client", "--server=127.0.0.1:5000",
                  "--data=/data", "--partition_index=1", "--partition_count=4",
                  "--name=sim-client-1", "--give_up_after=1m",
                  "--server_ready_file=/out/server.addr",
                  "--checkpoint_dir=/out/client-checkpoints/client-1"));
}

TEST(ClientArgs, TheFleetsSettingsReachEveryBoard) {
  SimPlan plan = Plan();
  plan.job.partition = runtime::PartitionSpec::Kind::kDirichlet;
  plan.job.alpha = 0.1;
  plan.server.plan.skip_bad_rows = true;
  plan.fleet.threads_per_client = 2;
  plan.fleet.checkpoint_every_batches = 10;
  const auto argv = ClientArgs(plan, 3, Ports(), nullptr, nullptr);
  for (const char* flag :
       {"--partition=dirichlet", "--alpha=0.1", "--skip_bad_rows=true",
        "--threads=2", "--checkpoint_every_batches=10"}) {
    EXPECT_THAT(argv, Contains(flag));
  }
}

TEST(ClientArgs, AttackersAndTheFleetProfileGiveTheTestInstruments) {
  SimPlan plan = Plan();
  plan.fleet.attackers = 1;
  plan.fleet.attack = "signflip";
  plan.fleet.boards.resize(2);
  BoardProfile& board = plan.fleet.boards[1];
  board.data_fraction = 0.5;
  board.compute_slowdown = 4;
  board.bandwidth_mbit = 8;
  board.pause_every = 2;
  board.pause_seconds = 20;
  plan.server.planner.data_moves = true;
  const auto first = ClientArgs(plan, 0, Ports(), nullptr, nullptr);
  EXPECT_THAT(first, Contains("--attack=signflip"));
  EXPECT_THAT(first, Contains("--allow_data_moves=true"));
  EXPECT_THAT(first, Contains("--partition_count=2"));
  EXPECT_FALSE(HasFlag(first, "--pause_every"));
  ShapedLink link;
  link.netns = "ns-1";
  link.host_address = "veth-host";
  const auto second = ClientArgs(plan, 1, Ports(), &link, nullptr);
  EXPECT_FALSE(HasFlag(second, "--attack"));
  EXPECT_EQ(second[1], "--server=veth-host:5000");
  EXPECT_THAT(second, Contains("--insecure=true"));
  EXPECT_THAT(std::vector<std::string>(second.end() - 4, second.end()),
              ElementsAre("--data_fraction=0.5", "--compute_slowdown=4",
                          "--pause_every=2", "--pause_seconds=20"));
}

SimPlan TieredPlan() {
  SimPlan plan = Plan();
  plan.fleet.clients = 3;
  plan.tiers.tiers = 2;
  plan.tiers.gateways = 2;
  return plan;
}

// Seven boards on three gateways: 3, 2 and 2 boards.
SimPlan SevenBoardsOnThreeGateways() {
  SimPlan plan = TieredPlan();
  plan.fleet.clients = 7;
  plan.tiers.gateways = 3;
  return plan;
}

TEST(GatewayArgs, EachGatewayJoinsTheServerAndWaitsForItsBoards) {
  const SimPlan plan = SevenBoardsOnThreeGateways();
  EXPECT_THAT(
      GatewayArgs(plan, 0, Ports(3)),
      ElementsAre("/bin/fedberry-server", "--eval_data=", "--min_clients=3",
                  "--min_clients_to_start=3", "--listen=127.0.0.1:6000",
                  "--output=/out/gateway-0", "--upstream=127.0.0.1:5000",
                  "--upstream_name=sim-gateway-0"));
  const auto second = GatewayArgs(plan, 1, Ports(3));
  // Two boards: the server's default --min_clients and
  // --min_clients_to_start.
  EXPECT_FALSE(HasFlag(second, "--min_clients"));
  EXPECT_FALSE(HasFlag(second, "--mode="));
  // The server's boards are the gateways.
  EXPECT_THAT(ServerArgs(plan, Ports(3), nullptr), Contains("--min_clients=3"));
  // Only the simulator's gateways may forward sums, each for its boards.
  EXPECT_THAT(ServerArgs(plan, Ports(3), nullptr),
              Contains("--site_gateways=sim-gateway-0:3,sim-gateway-1:2,"
                       "sim-gateway-2:2"));
  EXPECT_FALSE(
      HasFlag(ServerArgs(Plan(), Ports(), nullptr), "--site_gateways"));
}

TEST(GatewayArgs, SiteModeAndPrivacyReachTheGateways) {
  SimPlan plan = SevenBoardsOnThreeGateways();
  plan.tiers.site_mode = "async";
  plan.tiers.site_async_buffer = 2;
  plan.server.dp.noise_multiplier = 1.1;
  const auto argv = GatewayArgs(plan, 0, Ports(3));
  for (const char* flag : {"--min_clients=1", "--min_clients_to_start=3",
                           "--mode=async", "--async_buffer=2"}) {
    EXPECT_THAT(argv, Contains(flag));
  }
}

// Under tiers the sites aggregate their boards securely; the root takes
// their sums in the clear.
TEST(GatewayArgs, SecureAggregationRunsAtTheSitesNotTheRoot) {
  SimPlan plan = SevenBoardsOnThreeGateways();
  plan.server.secagg.mode = "secagg+";
  plan.server.secagg.neighbours = 2;
  for (int g = 0; g < 3; ++g) {
    const auto argv = GatewayArgs(plan, g, Ports(3));
    EXPECT_THAT(argv, Contains("--secure_aggregation=secagg+"));
    EXPECT_THAT(argv, Contains("--secagg_neighbours=2"));
  }
  EXPECT_FALSE(
      HasFlag(ServerArgs(plan, Ports(3), nullptr), "--secure_aggregation"));
  // Without tiers the one server runs it.
  plan.tiers.tiers = 1;
  EXPECT_THAT(ServerArgs(plan, Ports(), nullptr),
              Contains("--secure_aggregation=secagg+"));
}

TEST(ClientArgs, WithTiersBoardIJoinsGatewayIModG) {
  const SimPlan plan = TieredPlan();
  const auto second = ClientArgs(plan, 1, Ports(2), nullptr, nullptr);
  EXPECT_EQ(second[1], "--server=127.0.0.1:6001");
  EXPECT_THAT(second,
              Contains("--server_ready_file=/out/gateway-1/server.addr"));
  const auto third = ClientArgs(plan, 2, Ports(2), nullptr, nullptr);
  EXPECT_EQ(third[1], "--server=127.0.0.1:6000");
}

TEST(CheckSimPlan, RefusesWhatTheSimulatorCannotRun) {
  EXPECT_TRUE(CheckSimPlan(Plan()).ok());
  EXPECT_TRUE(CheckSimPlan(TieredPlan()).ok());
  const auto refused = [](void (*edit)(SimPlan&)) {
    SimPlan plan = Plan();
    edit(plan);
    const absl::Status s = CheckSimPlan(plan);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    return std::string(s.message());
  };
  EXPECT_THAT(refused([](SimPlan& p) { p.server.rounds.rounds = 0; }),
              HasSubstr("--clients and --rounds must be >= 1"));
  EXPECT_THAT(refused([](SimPlan& p) { p.fleet.attackers = 5; }),
              HasSubstr("the number of clients (4)"));
  EXPECT_THAT(refused([](SimPlan& p) { p.tiers.tiers = 3; }),
              StartsWith("--tiers is 1 or 2"));
  EXPECT_THAT(refused([](SimPlan& p) {
                p.tiers.tiers = 2;
                p.tiers.gateways = 5;
              }),
              StartsWith("--tiers is 1 or 2"));
  EXPECT_THAT(refused([](SimPlan& p) { p.tiers.site_async_buffer = 2; }),
              HasSubstr("they need --tiers=2"));
  EXPECT_THAT(refused([](SimPlan& p) {
                p.tiers.tiers = 2;
                p.transport.tls = true;
              }),
              HasSubstr("without TLS or a fleet profile"));
}

}  // namespace
}  // namespace fedberry::sim::child_args_test
