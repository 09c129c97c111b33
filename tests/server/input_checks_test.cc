#include "server/input_checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fedberry::server::input_checks_test {
namespace {

v1::JoinRequest Request(const std::string& name) {
  v1::JoinRequest r;
  r.set_client_name(name);
  r.set_num_samples(100);
  return r;
}

TEST(CheckJoin, AcceptsAPlainNameAndCutsLongDeviceText) {
  v1::JoinRequest r = Request("board-3.shed_2");
  r.mutable_device()->set_cpu_model(std::string(5000, 'A'));
  ASSERT_TRUE(CheckJoin(r, {}).ok());
  EXPECT_EQ(r.device().cpu_model().size(), InputLimits{}.max_device_text_bytes);
}

// The crash: a device string of 257 bytes with a two-byte character
// across byte 256 was cut inside the character, and writing clients.jsonl
// threw. Every field, every multi-byte width, every position of the
// character around the bound: the cut text is whole characters a strict
// UTF-8 check (proto's own serialiser) takes, and as long as fits.
TEST(CheckJoin, CutsDeviceTextAndVersionsOnACharacterBoundary) {
  const InputLimits limits;
  for (const std::string character :
       {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x8d\x93"}) {
    for (size_t before = 50; before <= 260; ++before) {
      const std::string text = std::string(before, 'a') + character + "zz";
      v1::JoinRequest r = Request("multi-byte");
      r.mutable_device()->set_hostname(text);
      r.mutable_device()->set_os(text);
      r.set_client_version(text);
      ASSERT_TRUE(CheckJoin(r, limits).ok());
      for (const auto& [cut, bound] :
           {std::pair{r.device().hostname(), limits.max_device_text_bytes},
            std::pair{r.device().os(), limits.max_device_text_bytes},
            std::pair{r.client_version(), limits.max_version_bytes}}) {
        ASSERT_LE(cut.size(), bound);
        EXPECT_EQ(cut, text.substr(0, cut.size()));
        EXPECT_GT(cut.size() + character.size(), std::min(bound, text.size()))
            << "before " << before;
      }
      std::string bytes;
      EXPECT_TRUE(r.SerializeToString(&bytes));
      v1::JoinRequest back;
      EXPECT_TRUE(back.ParseFromString(bytes)) << "before " << before;
    }
  }
}

TEST(CheckJoin, RefusesNamesThatAreEmptyLongOrNotPrintable) {
  for (const std::string& name :
       {std::string(), std::string(129, 'n'), std::string("a\nb"),
        std::string("tab\there"), std::string("\x1b[2J"),
        std::string("caf\xc3\xa9")}) {
    v1::JoinRequest r = Request(name);
    absl::Status s = CheckJoin(r, {});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(s.message().find("client_name"), std::string::npos) << s;
  }
  v1::JoinRequest r = Request(std::string(128, 'n'));
  EXPECT_TRUE(CheckJoin(r, {}).ok());
}

TEST(CheckJoin, RefusesAbsurdDeclaredSizes) {
  v1::JoinRequest many = Request("a");
  many.set_num_samples(uint64_t{1} << 41);
  EXPECT_EQ(CheckJoin(many, {}).code(), absl::StatusCode::kInvalidArgument);
  v1::JoinRequest big = Request("a");
  big.set_sample_bytes(uint64_t{1} << 31);
  EXPECT_EQ(CheckJoin(big, {}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckTrainMetrics, NamesTheFieldThatIsNotFinite) {
  v1::TrainMetrics m;
  m.set_train_loss(0.3);
  m.set_train_accuracy(0.9);
  m.set_train_seconds(12);
  EXPECT_TRUE(CheckTrainMetrics(m).ok());
  v1::TrainMetrics loss = m;
  loss.set_train_loss(std::numeric_limits<double>::infinity());
  EXPECT_NE(CheckTrainMetrics(loss).message().find("train_loss"),
            std::string::npos);
  v1::TrainMetrics accuracy = m;
  accuracy.set_train_accuracy(std::nan(""));
  EXPECT_NE(CheckTrainMetrics(accuracy).message().find("train_accuracy"),
            std::string::npos);
  v1::TrainMetrics seconds = m;
  seconds.set_train_seconds(-1);
  EXPECT_NE(CheckTrainMetrics(seconds).message().find("train_seconds"),
            std::string::npos);
}

TEST(SanitizeResources, DropsImplausibleReadingsAndKeepsTheRest) {
  v1::ResourceMetrics r;
  r.set_wall_seconds(12.5);
  r.set_cpu_seconds(-3);
  r.set_cpu_utilization(-1e15);
  r.set_samples_per_second(std::nan(""));
  r.set_paused_seconds(std::numeric_limits<double>::infinity());
  r.set_rss_bytes(200 << 20);
  r.set_peak_rss_bytes(std::numeric_limits<uint64_t>::max());
  r.set_watchdog_pauses(2);
  const std::vector<std::string> cleared = SanitizeResources(r);
  EXPECT_EQ(cleared.size(), 5u);
  EXPECT_EQ(r.wall_seconds(), 12.5);
  EXPECT_EQ(r.rss_bytes(), 200u << 20);
  EXPECT_EQ(r.watchdog_pauses(), 2u);
  EXPECT_FALSE(r.has_cpu_seconds());
  EXPECT_FALSE(r.has_cpu_utilization());
  EXPECT_FALSE(r.has_samples_per_second());
  EXPECT_FALSE(r.has_paused_seconds());
  EXPECT_FALSE(r.has_peak_rss_bytes());
  v1::ResourceMetrics plain;
  plain.set_cpu_utilization(3.9);  // four busy cores
  EXPECT_TRUE(SanitizeResources(plain).empty());
}

TEST(UpdateWeight, IsBoundedByTheTask) {
  v1::TrainConfig steps;
  steps.set_local_steps(50);
  steps.set_batch_size(32);
  EXPECT_EQ(MaxUpdateWeight(steps, 10, 0), 1600u);
  // A gateway's boards each train the steps: it weighs them all.
  EXPECT_EQ(MaxUpdateWeight(steps, 10, 0, /*boards=*/3), 4800u);
  v1::TrainConfig epochs;
  epochs.set_local_epochs(2);
  EXPECT_EQ(MaxUpdateWeight(epochs, 1000, 200), 2400u);
  EXPECT_TRUE(CheckUpdateWeight(2400, 2400).ok());
  EXPECT_EQ(CheckUpdateWeight(2401, 2400).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckUpdateWeight(0, 2400).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedberry::server::input_checks_test
