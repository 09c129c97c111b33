#include "client/eligibility.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "absl/time/civil_time.h"
#include "base/testing/simulated_clock.h"
#include "runtime/testing/fake_proc_files.h"

namespace fedberry::client::eligibility_test {
namespace {

using ::testing::HasSubstr;

constexpr char kThermal[] = "/fake/thermal_zone0/temp";
constexpr char kThrottled[] = "/fake/soc:firmware/get_throttled";

// 12:00 UTC on a fixed day, so window checks do not depend on the host's
// zone or the time the test runs.
absl::Time Noon() {
  return absl::FromCivil(absl::CivilMinute(2026, 11, 27, 12, 0),
                         absl::UTCTimeZone());
}

class EligibilityTest : public ::testing::Test {
 protected:
  EligibilityTest() : clock_(Noon()) {
    options_.thermal_file = kThermal;
    options_.throttled_file = kThrottled;
    options_.time_zone = absl::UTCTimeZone();
  }

  v1::BoardCondition Check() {
    Eligibility eligibility(options_, files_, clock_, sources_);
    return eligibility.Check();
  }

  EligibilityOptions options_;
  EligibilitySources sources_;
  runtime::FakeProcFiles files_;
  SimulatedClock clock_;
};

TEST_F(EligibilityTest, NoFilesNoSourcesIsEligibleWithNoReadings) {
  const v1::BoardCondition c = Check();
  EXPECT_EQ(c.declined(), "");
  EXPECT_FALSE(c.has_soc_celsius());
  EXPECT_FALSE(c.has_throttled());
  EXPECT_FALSE(c.has_memory_pressure());
}

TEST_F(EligibilityTest, TemperatureUnderTheLimitIsReadAndAccepted) {
  files_.Set(kThermal, "45277\n");
  const v1::BoardCondition c = Check();
  EXPECT_DOUBLE_EQ(c.soc_celsius(), 45.277);
  EXPECT_EQ(c.declined(), "");
}

TEST_F(EligibilityTest, TemperatureOverTheLimitDeclines) {
  files_.Set(kThermal, "71300\n");
  const v1::BoardCondition c = Check();
  EXPECT_DOUBLE_EQ(c.soc_celsius(), 71.3);
  EXPECT_EQ(c.declined(), "SoC at 71.3 C, over the 70 C limit");
}

TEST_F(EligibilityTest, TemperatureAtTheLimitIsAccepted) {
  files_.Set(kThermal, "70000");
  EXPECT_EQ(Check().declined(), "");
}

TEST_F(EligibilityTest, ZeroMaxTemperatureTurnsTheRuleOffButStillReads) {
  options_.max_temperature = 0;
  files_.Set(kThermal, "95000\n");
  const v1::BoardCondition c = Check();
  EXPECT_DOUBLE_EQ(c.soc_celsius(), 95);
  EXPECT_EQ(c.declined(), "");
}

TEST_F(EligibilityTest, MalformedThermalFileGivesNoReadingAndNoDecline) {
  files_.Set(kThermal, "hot\n");
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  spdlog::default_logger()->sinks().push_back(sink);
  Eligibility eligibility(options_, files_, clock_, sources_);
  for (int i = 0; i < 3; ++i) {
    const v1::BoardCondition c = eligibility.Check();
    EXPECT_FALSE(c.has_soc_celsius());
    EXPECT_EQ(c.declined(), "");
  }
  spdlog::default_logger()->flush();
  spdlog::default_logger()->sinks().pop_back();
  const std::string text = log.str();
  EXPECT_THAT(text, HasSubstr("temperature 'hot\\n' is not a whole number"));
  // Warned once, not at every poll.
  EXPECT_EQ(text.find("no reading from"), text.rfind("no reading from"));
}

TEST_F(EligibilityTest, UnderVoltageNowDeclines) {
  files_.Set(kThrottled, "50005\n");  // as the firmware driver writes it
  const v1::BoardCondition c = Check();
  EXPECT_EQ(c.throttled(), 0x50005u);
  EXPECT_THAT(c.declined(),
              HasSubstr("under-voltage (firmware flags 0x50005)"));
}

TEST_F(EligibilityTest, ThrottledNowDeclines) {
  files_.Set(kThrottled, "0x4");
  EXPECT_EQ(Check().declined(), "throttled by the firmware (flags 0x4)");
}

TEST_F(EligibilityTest, ThrottlingSinceBootOnlyOrFrequencyCapIsAccepted) {
  for (const char* flags : {"50000", "0x2", "0x8", "0"}) {
    files_.Set(kThrottled, flags);
    const v1::BoardCondition c = Check();
    EXPECT_TRUE(c.has_throttled()) << flags;
    EXPECT_EQ(c.declined(), "") << flags;
  }
}

TEST_F(EligibilityTest, DeclineThrottledOffStillReportsTheFlags) {
  options_.decline_throttled = false;
  files_.Set(kThrottled, "50005");
  const v1::BoardCondition c = Check();
  EXPECT_EQ(c.throttled(), 0x50005u);
  EXPECT_EQ(c.declined(), "");
}

TEST_F(EligibilityTest, MalformedThrottledFileGivesNoReading) {
  files_.Set(kThrottled, "throttled\n");
  const v1::BoardCondition c = Check();
  EXPECT_FALSE(c.has_throttled());
  EXPECT_EQ(c.declined(), "");
}

TEST_F(EligibilityTest, TooFewSamplesDeclines) {
  options_.min_samples = 100;
  uint64_t samples = 12;
  sources_.samples = [&samples] { return samples; };
  EXPECT_EQ(Check().declined(), "12 samples, fewer than --min_samples=100");
  samples = 100;
  EXPECT_EQ(Check().declined(), "");
}

TEST_F(EligibilityTest, ZeroMinSamplesIsOff) {
  sources_.samples = [] { return uint64_t{0}; };
  EXPECT_EQ(Check().declined(), "");
}

TEST_F(EligibilityTest, MemoryPressureWithinTheCoolDownDeclines) {
  std::optional<absl::Time> paused;
  sources_.last_pause = [&paused] { return paused; };
  v1::BoardCondition c = Check();
  EXPECT_FALSE(c.memory_pressure());  // never paused
  EXPECT_TRUE(c.has_memory_pressure());
  EXPECT_EQ(c.declined(), "");

  paused = clock_.Now();  // paused now
  EXPECT_EQ(Check().declined(), "memory pressure now (cool-down 5m)");
  clock_.Advance(absl::Seconds(40));
  c = Check();
  EXPECT_TRUE(c.memory_pressure());
  EXPECT_EQ(c.declined(), "memory pressure 40s ago (cool-down 5m)");
  clock_.Advance(absl::Minutes(5));
  c = Check();
  EXPECT_FALSE(c.memory_pressure());
  EXPECT_EQ(c.declined(), "");
}

TEST_F(EligibilityTest, ZeroCoolDownIsOff) {
  options_.pressure_cooldown = absl::ZeroDuration();
  sources_.last_pause = [this] { return clock_.Now() - absl::Seconds(1); };
  EXPECT_EQ(Check().declined(), "");
}

TEST_F(EligibilityTest, TrainWindowWrappingMidnight) {
  options_.train_window = TrainWindow{22 * 60, 6 * 60};
  EXPECT_EQ(Check().declined(), "outside the training window 22:00-06:00");
  clock_.Advance(absl::Hours(10));  // 22:00
  EXPECT_EQ(Check().declined(), "");
  clock_.Advance(absl::Hours(7) + absl::Minutes(59));  // 05:59
  EXPECT_EQ(Check().declined(), "");
  clock_.Advance(absl::Minutes(1));  // 06:00
  EXPECT_EQ(Check().declined(), "outside the training window 22:00-06:00");
}

TEST_F(EligibilityTest, TheFirstRuleThatAppliesIsTheReason) {
  options_.min_samples = 100;
  sources_.samples = [] { return uint64_t{5}; };
  files_.Set(kThermal, "80000");
  options_.train_window = TrainWindow{22 * 60, 6 * 60};
  EXPECT_THAT(Check().declined(), HasSubstr("fewer than --min_samples"));
  options_.min_samples = 0;
  EXPECT_THAT(Check().declined(), HasSubstr("SoC at 80.0 C"));
  files_.Remove(kThermal);
  EXPECT_THAT(Check().declined(), HasSubstr("training window"));
}

struct WindowCase {
  const char* text;
  bool ok;
  int start = 0;
  int end = 0;
};

TEST(ParseTrainWindow, Table) {
  const WindowCase cases[] = {
      {"22:00-06:00", true, 22 * 60, 6 * 60},
      {"08:30-17:45", true, 8 * 60 + 30, 17 * 60 + 45},
      {"8:00-9:00", true, 8 * 60, 9 * 60},
      {"18:00-24:00", true, 18 * 60, 24 * 60},
      {" 00:00-06:00 ", true, 0, 6 * 60},
      {"22:00", false},
      {"22:00-06:00-07:00", false},
      {"25:00-06:00", false},
      {"24:00-06:00", false},  // 24:00 only ends a window
      {"22:60-06:00", false},
      {"22:0-06:00", false},
      {"ab:cd-06:00", false},
      {"+1:00-06:00", false},
      {"22h-6h", false},
      {"06:00-06:00", false},  // empty
      {"00:00-24:00", false},  // all day: leave the flag empty
  };
  for (const WindowCase& c : cases) {
    auto window = ParseTrainWindow(c.text);
    if (!c.ok) {
      ASSERT_FALSE(window.ok()) << c.text;
      EXPECT_THAT(window.status().message(), HasSubstr(c.text));
      continue;
    }
    ASSERT_TRUE(window.ok()) << c.text << ": " << window.status();
    ASSERT_TRUE(window->has_value()) << c.text;
    EXPECT_EQ((*window)->start_minute, c.start) << c.text;
    EXPECT_EQ((*window)->end_minute, c.end) << c.text;
  }
  auto none = ParseTrainWindow("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(TrainWindow, ContainsAndPrints) {
  const TrainWindow day{8 * 60, 17 * 60};
  EXPECT_TRUE(day.Contains(8 * 60));
  EXPECT_FALSE(day.Contains(17 * 60));
  EXPECT_FALSE(day.Contains(3 * 60));
  const TrainWindow night{22 * 60, 6 * 60};
  EXPECT_TRUE(night.Contains(23 * 60));
  EXPECT_TRUE(night.Contains(0));
  EXPECT_FALSE(night.Contains(12 * 60));
  EXPECT_EQ(night.ToString(), "22:00-06:00");
  EXPECT_EQ((TrainWindow{18 * 60, 24 * 60}).ToString(), "18:00-24:00");
}

struct FlagsCase {
  const char* text;
  bool ok;
  uint32_t flags = 0;
};

TEST(ParseThrottledFlags, Table) {
  const FlagsCase cases[] = {
      {"50005\n", true, 0x50005},  // the sysfs file: hex without 0x
      {"0x50005", true, 0x50005},
      {"0X4", true, 0x4},
      {"throttled=0x50000", true, 0x50000},  // vcgencmd get_throttled
      {"0", true, 0},
      {"e0008", true, 0xe0008},
      {"", false},
      {"0x", false},
      {"-1", false},
      {"50005 junk", false},
      {"123456789", false},  // more than 32 bits
      {"throttled", false},
  };
  for (const FlagsCase& c : cases) {
    auto flags = ParseThrottledFlags(c.text);
    EXPECT_EQ(flags.ok(), c.ok) << c.text;
    if (c.ok && flags.ok()) {
      EXPECT_EQ(*flags, c.flags) << c.text;
    }
  }
}

TEST(ParseMillidegrees, Table) {
  EXPECT_DOUBLE_EQ(*ParseMillidegrees("45277\n"), 45.277);
  EXPECT_DOUBLE_EQ(*ParseMillidegrees("-5000"), -5);
  EXPECT_FALSE(ParseMillidegrees("").ok());
  EXPECT_FALSE(ParseMillidegrees("45.2").ok());
  EXPECT_FALSE(ParseMillidegrees("warm").ok());
}

TEST(ValidateEligibilityOptions, RefusesNegativeLimits) {
  EligibilityOptions o;
  EXPECT_TRUE(ValidateEligibilityOptions(o).ok());
  o.max_temperature = -1;
  EXPECT_THAT(ValidateEligibilityOptions(o).message(),
              HasSubstr("--max_temperature"));
  o.max_temperature = 70;
  o.pressure_cooldown = -absl::Seconds(1);
  EXPECT_THAT(ValidateEligibilityOptions(o).message(),
              HasSubstr("--pressure_cooldown"));
}

}  // namespace
}  // namespace fedberry::client::eligibility_test
