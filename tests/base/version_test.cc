#include "base/version.h"

#include <vector>

#include "gtest/gtest.h"

namespace fedberry::version_test {
namespace {

TEST(Version, ThisBuildsVersionParses) {
  absl::StatusOr<std::vector<int>> v = ParseVersion(FedberryVersion());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->size(), 3u);
}

TEST(Version, ParsesDottedNumbersAndDropsDebianRevisions) {
  EXPECT_EQ(*ParseVersion("1.2.10"), (std::vector<int>{1, 2, 10}));
  EXPECT_EQ(*ParseVersion("0.2.0-1"), (std::vector<int>{0, 2, 0}));
  EXPECT_EQ(*ParseVersion("3+deb12u1"), (std::vector<int>{3}));
  EXPECT_EQ(*ParseVersion("0.3~rc1"), (std::vector<int>{0, 3}));
}

TEST(Version, RefusesWhatIsNotAVersionNamingIt) {
  for (const char* bad :
       {"", "-1", "1..2", "a.b", "1.2.3.4.5", "1.x", "9999999.0", " 1.0"}) {
    absl::StatusOr<std::vector<int>> v = ParseVersion(bad);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok() && *bad != '\0') {
      EXPECT_NE(v.status().message().find(bad), absl::string_view::npos);
    }
  }
}

TEST(Version, ComparesNumericallyWithMissingPartsAsZero) {
  EXPECT_LT(CompareVersions({0, 9}, {0, 10}), 0);  // not as text
  EXPECT_GT(CompareVersions({1, 0, 1}, {1, 0}), 0);
  EXPECT_EQ(CompareVersions({1, 2}, {1, 2, 0}), 0);
  EXPECT_LT(CompareVersions({0, 1, 0}, {0, 2, 0}), 0);
}

}  // namespace
}  // namespace fedberry::version_test
