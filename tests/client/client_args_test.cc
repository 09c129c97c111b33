// fedberry-client's command line from a ClientConfig (client_args.h): the
// defaults give no flags, and the flags of a config with every field set
// parse back to it.
#include "client/client_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "base/testing/set_flags.h"
#include "client/client_flags.h"

namespace fedberry::client::client_args_test {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

void SetBoardAndAgent(ClientConfig& c) {
  c.transport = {
      "gw.local:6000", {"/ca.crt", "/b.crt", "/b.key", "gw.fleet"}, true};
  c.data.spec = "csv:/d.csv";
  c.data.partition = {runtime::PartitionSpec::Kind::kDirichlet, 3, 8, 0.25, 7};
  c.data.cache_dir = "/cache";
  c.model_sha256 = std::string(64, 'a');
  c.skip_bad_rows = true;
  c.threads = 4;
  c.name = "pi-3";
  c.rpc_timeout = absl::Seconds(20);
  c.max_backoff = absl::Seconds(5);
  c.give_up_after = absl::Minutes(2);
  c.clock_wait = absl::Minutes(3);
  c.resource_sample_interval = absl::Milliseconds(250);
  c.allow_data_moves = true;
  c.server_ready_file = "/out/server.addr";
  c.checkpoint_dir = "/ck";
  c.checkpoint_keep = 5;
  c.checkpoint = {25, absl::Seconds(15)};
}

void SetEligibilityAndWatchdog(ClientConfig& c) {
  EligibilityOptions& e = c.eligibility;
  e.min_samples = 100;
  e.max_temperature = 65.5;
  e.thermal_file = "/t";
  e.throttled_file = "/th";
  e.decline_throttled = false;
  e.pressure_cooldown = absl::Minutes(3);
  e.train_window = TrainWindow{22 * 60, 6 * 60};
  c.watchdog = false;
  c.supervise = true;  // the watchdog's levels are read for the supervisor
  c.supervise_max_restarts = 4;
  c.watchdog_poll_interval = absl::Milliseconds(500);
  c.watchdog_release = "criu";
  c.criu_dir = "/dumps";
  runtime::WatchdogOptions& w = c.watchdog_options;
  w.soft_available = {0.3, std::nullopt};
  w.pause_available = {std::nullopt, 200u << 20};
  w.resume_available = {1.0, std::nullopt};
  w.critical_available = {std::nullopt, 50u << 20};
  w.pause_rss_bytes = 700u << 20;
  w.soft_psi_some10 = 6;
  w.pause_psi_some10 = 12;
  w.resume_psi_some10 = 1.5;
  w.critical_psi_full10 = 45;
  w.soft_hold = absl::Seconds(1);
  w.pause_hold = absl::Seconds(4);
  w.resume_hold = absl::Seconds(11);
  w.critical_hold = absl::Seconds(1);
  w.release_after = absl::Seconds(90);
  w.report_every = absl::Seconds(20);
  w.soft_micro_batches = 4;
}

// A config with a value other than the flags' default in every field.
ClientConfig EveryFieldSet() {
  ClientConfig c;
  SetBoardAndAgent(c);
  SetEligibilityAndWatchdog(c);
  return c;
}

TEST(ClientArgsFrom, TheFlagsDefaultsGiveNoFlags) {
  absl::StatusOr<ClientConfig> parsed = ClientConfigFromFlags();
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(ClientArgsFrom(*parsed), IsEmpty());
  EXPECT_THAT(ClientArgsFrom(ClientFlagDefaults()), IsEmpty());
}

TEST(ClientArgsFrom, EveryFieldParsesBackToTheSameConfig) {
  const std::vector<std::string> args = ClientArgsFrom(EveryFieldSet());
  absl::FlagSaver saver;
  const absl::Status set = base::SetFlagsForTest(args);
  ASSERT_TRUE(set.ok()) << set;
  absl::StatusOr<ClientConfig> parsed = ClientConfigFromFlags();
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  // Each field differs from its default, so each has its flag; the parsed
  // config gives the same flags, hence the same values.
  EXPECT_EQ(ClientArgsFrom(*parsed), args);
  EXPECT_EQ(parsed->data.partition.kind,
            runtime::PartitionSpec::Kind::kDirichlet);
  EXPECT_EQ(parsed->data.partition.seed, 7u);
  EXPECT_EQ(parsed->transport.tls.server_name, "gw.fleet");
  EXPECT_EQ(parsed->eligibility.train_window->ToString(), "22:00-06:00");
  EXPECT_EQ(parsed->watchdog_options.soft_available.fraction, 0.3);
  EXPECT_EQ(parsed->watchdog_options.resume_available.fraction, 1.0);
  EXPECT_EQ(parsed->watchdog_options.pause_available.bytes, 200u << 20);
  EXPECT_EQ(parsed->watchdog_options.pause_rss_bytes, 700u << 20);
  EXPECT_EQ(parsed->criu_dir, "/dumps");
  EXPECT_EQ(parsed->checkpoint.every, absl::Seconds(15));
}

TEST(ClientArgsFrom, GivesEveryFlagOfTheClient) {
  std::set<std::string> given;
  for (const std::string& arg : ClientArgsFrom(EveryFieldSet())) {
    given.insert(arg.substr(2, arg.find('=') - 2));
  }
  std::set<std::string> defined;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::StrContains(flag->Filename(), kClientFlagsFile)) {
      defined.insert(std::string(name));
    }
  }
  EXPECT_EQ(defined.size(), 57u);
  EXPECT_EQ(given, defined);
}

TEST(ClientArgsFrom, WritesValuesAsTheFlagsReadThem) {
  ClientConfig config = ClientFlagDefaults();
  config.data.partition.kind = runtime::PartitionSpec::Kind::kDirichlet;
  config.watchdog_options.soft_available = {1.0, std::nullopt};
  config.watchdog_options.pause_rss_bytes = 1048576;
  config.eligibility.train_window = TrainWindow{0, 24 * 60};
  config.give_up_after = absl::Seconds(60);
  EXPECT_THAT(ClientArgsFrom(config),
              ElementsAre("--partition=dirichlet", "--give_up_after=1m",
                          "--train_window=00:00-24:00",
                          // A share keeps its point: "1" would be one byte.
                          "--watchdog_soft_available=1.0",
                          "--watchdog_pause_rss=1048576"));
}

TEST(ClientArgsFrom, FoldersTheClientWouldPickAreNotGiven) {
  ClientConfig config = ClientFlagDefaults();
  config.checkpoint_dir = "/ck";
  config.data.cache_dir = DefaultCacheDir("/ck");
  config.criu_dir = DefaultCriuDir("/ck");
  EXPECT_THAT(ClientArgsFrom(config), ElementsAre("--checkpoint_dir=/ck"));
  config.data.cache_dir.clear();
  config.criu_dir.clear();
  EXPECT_THAT(ClientArgsFrom(config), ElementsAre("--checkpoint_dir=/ck"));
  config.data.cache_dir = "/ck/other";
  EXPECT_THAT(ClientArgsFrom(config), Contains("--cache_dir=/ck/other"));
  EXPECT_THAT(ClientArgsFrom(config),
              Not(Contains(testing::StartsWith("--criu_dir"))));
}

}  // namespace
}  // namespace fedberry::client::client_args_test
