#include "runtime/fd_limit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fedberry::runtime::fd_limit_test {
namespace {

class FakeFdLimitSystem : public FdLimitSystem {
 public:
  FdLimits limits{1024, 4096};
  uint64_t open = 10;
  absl::Status set_error;
  absl::StatusOr<FdLimits> Get() override { return limits; }
  absl::Status SetSoft(uint64_t soft) override {
    if (!set_error.ok()) return set_error;
    limits.soft = soft;
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> CountOpen() override { return open; }
};

TEST(FdLimit, RaisesTheSoftLimitToTheHardOneAndSaysBoth) {
  FakeFdLimitSystem system;
  auto raised = RaiseFdLimit(system);
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_EQ(raised->before.soft, 1024u);
  EXPECT_EQ(raised->after.soft, 4096u);
  EXPECT_EQ(system.limits.soft, 4096u);
  EXPECT_EQ(raised->Describe(),
            "open-file limit raised from 1024 to 4096 (the hard limit)");
}

TEST(FdLimit, AtTheHardLimitAlreadyNothingChanges) {
  FakeFdLimitSystem system;
  system.limits = {kNoFdLimit, kNoFdLimit};
  auto raised = RaiseFdLimit(system);
  ASSERT_TRUE(raised.ok());
  EXPECT_EQ(raised->Describe(),
            "open-file limit unlimited (already the hard limit)");
}

TEST(FdLimit, ARefusedRaiseSaysWhyAndTheLimits) {
  FakeFdLimitSystem system;
  system.set_error = absl::PermissionDeniedError("setrlimit: not permitted");
  auto raised = RaiseFdLimit(system);
  ASSERT_FALSE(raised.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(raised.status()));
  EXPECT_EQ(raised.status().message(),
            "cannot raise the open-file limit from 1024 to its hard limit "
            "4096: setrlimit: not permitted");
}

TEST(FdLimit, TheRealSystemCountsItsOwnDescriptors) {
  auto before = FdLimitSystem::Real().CountOpen();
  ASSERT_TRUE(before.ok()) << before.status();
  FILE* f = std::fopen("/proc/self/status", "r");
  ASSERT_NE(f, nullptr);
  auto during = FdLimitSystem::Real().CountOpen();
  std::fclose(f);
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(*during, *before + 1);
  auto limits = FdLimitSystem::Real().Get();
  ASSERT_TRUE(limits.ok());
  EXPECT_LE(limits->soft, limits->hard);
}

TEST(FdUsageWatch, SaysOnceNearTheLimitOnceAtItAndAgainAfterARecovery) {
  FakeFdLimitSystem system;
  system.limits = {100, 100};
  std::vector<std::string> said;
  FdUsageWatch watch(system, [&](const std::string& s) { said.push_back(s); });
  system.open = 50;
  watch.Check();
  EXPECT_TRUE(said.empty());
  system.open = 91;
  watch.Check();
  watch.Check();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("nearly used up: 91 open of 100"), std::string::npos)
      << said[0];
  system.open = 99;
  watch.Check();
  watch.Check();
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[1].find("out of file descriptors: 99 open of 100; new board "
                         "connections are refused"),
            std::string::npos)
      << said[1];
  EXPECT_NE(said[1].find("LimitNOFILE="), std::string::npos);
  system.open = 85;  // still above the recovery mark
  watch.Check();
  system.open = 99;
  watch.Check();
  EXPECT_EQ(said.size(), 2u);
  system.open = 70;
  watch.Check();
  system.open = 95;
  watch.Check();
  EXPECT_EQ(said.size(), 3u);
}

}  // namespace
}  // namespace fedberry::runtime::fd_limit_test
