// fedberry-server's command line as a ServerConfig: the flags reach it, its
// defaults are the flags', and the checks name the flags they refuse.
#include "apps/server/server_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/time/time.h"
#include "apps/server/secagg_settings.h"
#include "apps/server/server_checks.h"
#include "apps/server/server_flags.h"
#include "apps/server/server_options.h"

ABSL_DECLARE_FLAG(std::string, upstream);
ABSL_DECLARE_FLAG(std::string, feature_columns);
ABSL_DECLARE_FLAG(bool, insecure);
ABSL_DECLARE_FLAG(std::string, strategy);
ABSL_DECLARE_FLAG(double, fraction);
ABSL_DECLARE_FLAG(int, max_transport_mib);

namespace fedberry::apps::server_config_test {
namespace {

using ::testing::HasSubstr;

TEST(ServerConfigFromFlags, DefaultsAreTheConfigsOwn) {
  const absl::StatusOr<ServerConfig> parsed = ServerConfigFromFlags();
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ServerConfig& flags = *parsed;
  const ServerConfig plain;
  EXPECT_EQ(flags.plan.model, plain.plan.model);
  EXPECT_EQ(flags.plan.lr, plain.plan.lr);
  EXPECT_EQ(flags.plan.batch_size, plain.plan.batch_size);
  EXPECT_EQ(flags.plan.seed, plain.plan.seed);
  EXPECT_EQ(flags.rounds.rounds, plain.rounds.rounds);
  EXPECT_EQ(flags.rounds.quorum, plain.rounds.quorum);
  EXPECT_EQ(flags.rounds.paused_grace, plain.rounds.paused_grace);
  EXPECT_EQ(flags.rounds.overlap_evaluation, plain.rounds.overlap_evaluation);
  EXPECT_EQ(flags.mode.mode, plain.mode.mode);
  EXPECT_EQ(flags.mode.staleness_weight, plain.mode.staleness_weight);
  EXPECT_EQ(flags.board_eval.deadline, plain.board_eval.deadline);
  EXPECT_EQ(flags.planner.max_factor, plain.planner.max_factor);
  EXPECT_EQ(flags.strategy.name, plain.strategy.name);
  EXPECT_EQ(flags.strategy.beta2, plain.strategy.beta2);
  EXPECT_EQ(flags.dp.delta, plain.dp.delta);
  EXPECT_EQ(flags.dp.clip_learning_rate, plain.dp.clip_learning_rate);
  EXPECT_EQ(flags.fleet.max_update_ratio, plain.fleet.max_update_ratio);
  EXPECT_EQ(flags.transport.max_streams, plain.transport.max_streams);
  EXPECT_EQ(flags.transport.stream_stall_time,
            plain.transport.stream_stall_time);
  EXPECT_EQ(flags.output.dir, plain.output.dir);
  EXPECT_EQ(flags.output.resume, plain.output.resume);
  EXPECT_EQ(flags.transport.transport.listen, "0.0.0.0:50051");
  EXPECT_FALSE(flags.is_gateway());
  // Every default passes the checks that need no model.
  EXPECT_TRUE(CheckServerOptions(flags).ok());
  EXPECT_TRUE(CheckDpCombination(flags).ok());
  EXPECT_TRUE(CheckMode(flags).ok());
}

TEST(ServerConfigFromFlags, FlagsReachTheirGroups) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_upstream, "central:50051");
  absl::SetFlag(&FLAGS_feature_columns, "a,b");
  absl::SetFlag(&FLAGS_insecure, true);
  absl::SetFlag(&FLAGS_strategy, "median");
  absl::SetFlag(&FLAGS_max_transport_mib, 3);
  const absl::StatusOr<ServerConfig> parsed = ServerConfigFromFlags();
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ServerConfig& config = *parsed;
  EXPECT_TRUE(config.is_gateway());
  EXPECT_EQ(config.gateway.link.server, "central:50051");
  EXPECT_THAT(config.plan.feature_columns, ::testing::ElementsAre("a", "b"));
  // --insecure speaks for both links.
  EXPECT_TRUE(config.transport.transport.insecure);
  EXPECT_TRUE(config.gateway.link.insecure);
  // A gateway averages: its parent applies the job's strategy.
  EXPECT_EQ(config.strategy.name, "median");
  EXPECT_EQ(StrategyOptionsOf(config).name, "fedavg");
  const server::ServerOptions options = ServerOptionsOf(config);
  EXPECT_TRUE(options.coordinator.upstream);
  EXPECT_EQ(options.max_transport_bytes, size_t{3} << 20);
}

TEST(ServerOptionsOf, TheJobsStrategySpillsUnderTheOutput) {
  ServerConfig config;
  config.strategy.name = "trimmed_mean";
  config.output.dir = "out";
  const server::StrategyOptions s = StrategyOptionsOf(config);
  EXPECT_EQ(s.name, "trimmed_mean");
  EXPECT_EQ(s.spill_dir, "out/spill");
  EXPECT_EQ(DpOptionsOf(config).enabled(), false);
}

TEST(PlanRequestOf, NamesTheFlagThatDoesNotParse) {
  ServerConfig config;
  config.plan.input_shape = "3,x";
  auto request = PlanRequestOf(config);
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(request.status().message(), HasSubstr("--input_shape"));
}

TEST(CheckBoardEvalOptions, NamesTheFlags) {
  ServerConfig config;
  config.board_eval.evaluate_only = true;
  EXPECT_THAT(CheckBoardEvalOptions(config).message(),
              HasSubstr("give --evaluate_on_boards"));
  config.board_eval.evaluate_on_boards = 0.2;
  EXPECT_TRUE(CheckBoardEvalOptions(config).ok());
  config.planner.data_moves = true;
  EXPECT_THAT(CheckBoardEvalOptions(config).message(),
              HasSubstr("--evaluate_on_boards and --data_moves"));
  config.planner.data_moves = false;
  config.gateway.link.server = "central:50051";
  EXPECT_THAT(CheckBoardEvalOptions(config).message(),
              HasSubstr("site gateway"));
}

TEST(CheckServerOptions, RefusesStepsWithDataMovesAndBadRanges) {
  ServerConfig config;
  config.planner.planner = "greedy";
  config.planner.data_moves = true;
  config.plan.local_steps = 5;
  EXPECT_THAT(CheckServerOptions(config).message(),
              HasSubstr("--local_steps=0"));
  config = ServerConfig();
  config.rounds.rounds = 0;
  const absl::Status s = CheckServerOptions(config);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("rounds >= 1"));
  config = ServerConfig();
  config.strategy.name = "krum";
  config.strategy.byzantine = 5;
  EXPECT_THAT(CheckServerOptions(config).message(),
              HasSubstr("invalid strategy settings"));
}

TEST(CheckDpCombination, NamesTheConflictingFlag) {
  ServerConfig config;
  config.dp.noise_multiplier = 1;
  config.dp.clip = 0.1;
  EXPECT_TRUE(CheckDpCombination(config).ok());
  config.planner.data_moves = true;
  EXPECT_THAT(CheckDpCombination(config).message(),
              HasSubstr("does not combine with --data_moves"));
  config.planner.data_moves = false;
  config.rounds.over_select = 1.5;
  EXPECT_THAT(CheckDpCombination(config).message(),
              HasSubstr("--target_updates or --over_select"));
  config.gateway.link.server = "central:50051";
  EXPECT_THAT(CheckDpCombination(config).message(), HasSubstr("--dp_*"));
}

TEST(CheckSecAgg, TakesCentralDpAndNamesWhatItDoesNotCombineWith) {
  ServerConfig config;
  config.secagg.mode = "secagg+";
  EXPECT_TRUE(CheckSecAgg(config).ok());
  // Central DP: boards clip, the gateway noises the unmasked sum.
  config.dp.noise_multiplier = 1;
  config.dp.clip = 0.1;
  EXPECT_TRUE(CheckSecAgg(config).ok());
  config.dp.adaptive_clip = true;
  EXPECT_TRUE(CheckSecAgg(config).ok());
  config.dp.local = true;
  EXPECT_THAT(CheckSecAgg(config).message(),
              HasSubstr("does not combine with --dp_local"));
  config = ServerConfig();
  config.secagg.mode = "secagg+";
  config.strategy.name = "krum";
  EXPECT_THAT(CheckSecAgg(config).message(), HasSubstr("--strategy=median"));
  config.strategy.name = "fedavg";
  // A site gateway runs its own boards' sessions and forwards the sum.
  config.gateway.link.server = "central:50051";
  EXPECT_TRUE(CheckSecAgg(config).ok());
  config = ServerConfig();
  config.secagg.mode = "secagg";
  EXPECT_THAT(CheckSecAgg(config).message(),
              HasSubstr("--secure_aggregation must be off or secagg+"));
  config.secagg.mode = "secagg+";
  config.secagg.bits = 33;
  EXPECT_THAT(CheckSecAgg(config).message(), HasSubstr("--secagg_bits"));
}

TEST(CheckMode, AsyncNamesWhatItDoesNotCombineWith) {
  ServerConfig config;
  config.mode.mode = "often";
  EXPECT_THAT(CheckMode(config).message(),
              HasSubstr("--mode must be sync or async"));
  config.mode.mode = "async";
  EXPECT_TRUE(CheckMode(config).ok());
  config.strategy.name = "median";
  EXPECT_THAT(CheckMode(config).message(), HasSubstr("--strategy=median"));
  // At a gateway the strategy is fedavg whatever --strategy says.
  config.gateway.link.server = "central:50051";
  EXPECT_TRUE(CheckMode(config).ok());
  config = ServerConfig();
  config.mode.mode = "async";
  config.rounds.fraction = 0.5;
  EXPECT_THAT(CheckMode(config).message(), HasSubstr("--fraction"));
  config.rounds.fraction = 1;
  config.dp.clip = 0.1;
  EXPECT_THAT(CheckMode(config).message(), HasSubstr("differential privacy"));
}

TEST(ApplyMode, SetsTheAsynchronousRounds) {
  ServerConfig config;
  server::CoordinatorOptions c = CoordinatorOptionsOf(config);
  ASSERT_TRUE(ApplyMode(config, c).ok());
  EXPECT_FALSE(c.async.has_value());
  config.mode.mode = "async";
  config.mode.async_buffer = 4;
  ASSERT_TRUE(ApplyMode(config, c).ok());
  ASSERT_TRUE(c.async.has_value());
  EXPECT_EQ(c.async->buffer, 4);
}

}  // namespace
}  // namespace fedberry::apps::server_config_test
