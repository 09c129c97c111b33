// fedberry-server's command line from a ServerConfig (server_args.h): the
// defaults give no flags, and the flags of a config with every field set
// parse back to it.
#include "apps/server/server_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "apps/server/server_config.h"
#include "apps/server/server_flags.h"
#include "base/testing/set_flags.h"

namespace fedberry::apps::server_args_test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

void SetPlanAndRounds(ServerConfig& c) {
  PlanConfig& p = c.plan;
  p.model = "resnet8";
  p.weights = "/w/global_model.pt";
  p.task = "regression";
  p.loss = "mse";
  p.optimizer = "adamw";
  p.lr = 0.125;
  p.momentum = 0.5;
  p.weight_decay = 1e-4;
  p.local_epochs = 3;
  p.local_steps = 7;
  p.batch_size = 16;
  p.input_shape = "3,32,32";
  p.input_mean = "0.5";
  p.input_std = "0.25";
  p.num_outputs = 7;
  p.label_column = "y";
  p.feature_columns = {"a", "b"};
  p.skip_bad_rows = true;
  p.eval_data = "csv:/e.csv";
  p.trainable = "fc.*";
  p.update_encoding = "topk";
  p.topk_fraction = 0.05;
  p.model_encoding = "fp16";
  p.seed = 42;
  RoundsConfig& r = c.rounds;
  r.rounds = 9;
  r.fraction = 0.3;
  r.min_clients = 4;
  r.min_clients_to_start = 6;
  r.quorum = 0.7;
  r.round_deadline = absl::Seconds(90);
  r.paused_grace = absl::Seconds(20);
  r.target_updates = 5;
  r.over_select = 1.3;
  r.overlap_evaluation = false;
  c.mode = {"async", 3, "constant", 4, 2};
  c.board_eval = {0.2, 2, absl::Seconds(30), 5, true};
  c.planner = {"greedy", 0.25, 3, 2, 0.5, true, absl::Seconds(45)};
}

void SetTheOtherGroups(ServerConfig& c) {
  c.strategy = {"multikrum", 0.01, 0.1, 0.9, 0.999, 1e-3, 0.2, 1, 2};
  c.secagg = {"secagg+", 5, 3, 0.25, 24, 0.2, 0.05, absl::Seconds(30)};
  DpConfig& dp = c.dp;
  dp.noise_multiplier = 1.1;
  dp.clip = 0.5;
  dp.adaptive_clip = true;
  dp.local = true;
  dp.target_quantile = 0.6;
  dp.clip_learning_rate = 0.3;
  dp.clipped_count_stddev = 0.7;
  dp.delta = 1e-6;
  dp.target_epsilon = 8;
  dp.noise_seed = 7;
  c.fleet = {"0.2.0", "gw-a:4,gw-b", 50, 100, 5};
  TransportConfig& t = c.transport;
  t.transport = {
      "10.0.0.1:6000", {"/s.crt", "/s.key", "/ca.crt"}, "/r.crl", true};
  t.metrics_listen = "9464";
  t.metrics_max_connections = 32;
  t.metrics_max_connections_per_ip = 8;
  t.max_threads = 64;
  t.max_transport_mib = 128;
  t.max_streams = 8;
  t.max_inflight_updates = 4;
  t.max_streams_per_caller = 2;
  t.stream_stall_time = absl::Seconds(15);
  t.max_stream_time = absl::Minutes(3);
  c.output = {"/out", 5, false};
  c.gateway.link = {"central:50051",
                    {"/up-ca.crt", "/up.crt", "/up.key", "central.local"},
                    true};
  c.gateway.name = "site-a";
  c.threads = 3;
}

// A config with a value other than the flags' default in every field.
ServerConfig EveryFieldSet() {
  ServerConfig c;
  SetPlanAndRounds(c);
  SetTheOtherGroups(c);
  return c;
}

TEST(ServerArgsFrom, TheFlagsDefaultsGiveNoFlags) {
  const absl::StatusOr<ServerConfig> parsed = ServerConfigFromFlags();
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(ServerArgsFrom(*parsed), IsEmpty());
  EXPECT_THAT(ServerArgsFrom(ServerFlagDefaults()), IsEmpty());
}

TEST(ServerArgsFrom, EveryFieldParsesBackToTheSameConfig) {
  const ServerConfig config = EveryFieldSet();
  const std::vector<std::string> args = ServerArgsFrom(config);
  absl::FlagSaver saver;
  const absl::Status set = base::SetFlagsForTest(args);
  ASSERT_TRUE(set.ok()) << set;
  const absl::StatusOr<ServerConfig> read = ServerConfigFromFlags();
  ASSERT_TRUE(read.ok()) << read.status();
  const ServerConfig& parsed = *read;
  // Each field differs from its default, so each has its flag; the parsed
  // config gives the same flags, hence the same values.
  EXPECT_EQ(ServerArgsFrom(parsed), args);
  EXPECT_THAT(parsed.plan.feature_columns, ElementsAre("a", "b"));
  EXPECT_EQ(parsed.strategy.tau, 1e-3);
  EXPECT_EQ(parsed.dp.delta, 1e-6);
  EXPECT_EQ(parsed.rounds.over_select, 1.3);
  EXPECT_EQ(parsed.rounds.round_deadline, absl::Seconds(90));
  EXPECT_EQ(parsed.dp.noise_seed, 7u);
  EXPECT_EQ(parsed.transport.metrics_max_connections, 32);
  EXPECT_EQ(parsed.transport.metrics_max_connections_per_ip, 8);
  EXPECT_TRUE(parsed.gateway.link.insecure);
  EXPECT_EQ(parsed.gateway.link.tls.server_name, "central.local");
}

TEST(ServerArgsFrom, GivesEveryFlagOfTheServer) {
  std::set<std::string> given;
  for (const std::string& arg : ServerArgsFrom(EveryFieldSet())) {
    given.insert(arg.substr(2, arg.find('=') - 2));
  }
  std::set<std::string> defined;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::StrContains(flag->Filename(), kServerFlagsFile)) {
      defined.insert(std::string(name));
    }
  }
  EXPECT_EQ(defined.size(), 109u);
  EXPECT_EQ(given, defined);
}

TEST(ServerArgsFrom, WritesValuesAsTheyAreTyped) {
  ServerConfig config = ServerFlagDefaults();
  config.strategy.name = "fedprox";
  config.strategy.proximal_mu = 0.01;
  config.rounds.over_select = 1.3;
  config.dp.adaptive_clip = true;
  config.rounds.round_deadline = absl::Seconds(30);
  EXPECT_THAT(ServerArgsFrom(config),
              ElementsAre("--strategy=fedprox", "--proximal_mu=0.01",
                          "--over_select=1.3", "--round_deadline=30s",
                          "--dp_adaptive_clip=true"));
}

}  // namespace
}  // namespace fedberry::apps::server_args_test
