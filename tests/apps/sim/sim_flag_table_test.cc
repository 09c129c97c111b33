// fedberry-sim's flag table: a plain SimPlan is the plan its flags' defaults
// give, and the rows' conversions refuse what the simulator cannot use.
#include "apps/sim/sim_flag_table.h"

#include <gtest/gtest.h>

#include "apps/sim/sim_flag_types.h"
#include "apps/sim/sim_plan.h"
#include "base/flag_table.h"

namespace fedberry::sim::sim_flag_table_test {
namespace {

// SimPlan's member defaults and the table's are written apart: they agree.
TEST(SimFlagTable, PlainPlanIsTheFlagsDefaults) {
  const SimPlan plan;
  for (const base::FlagRow<SimPlan>& row : SimFlagTable()) {
    EXPECT_TRUE(row.AtDefault(plan))
        << "--" << row.name() << ": " << row.Text(plan);
  }
}

TEST(SimFlagTypes, SizeTextTakesSizesOnly) {
  EXPECT_EQ(*SizeText::Parse("150MiB"), uint64_t{150} << 20);
  EXPECT_EQ(*SizeText::Parse(SizeText::Unparse(uint64_t{1} << 30)),
            uint64_t{1} << 30);
  for (const char* refused : {"", "25%", "lots"}) {
    EXPECT_EQ(SizeText::Parse(refused).status().code(),
              absl::StatusCode::kInvalidArgument)
        << refused;
  }
}

TEST(SimFlagTypes, OptionalCountTextIsNoneWhenEmpty) {
  EXPECT_FALSE(OptionalCountText::Parse("")->has_value());
  EXPECT_EQ(OptionalCountText::Parse("3")->value(), 3);
  EXPECT_EQ(OptionalCountText::Unparse(std::nullopt), "");
  EXPECT_EQ(OptionalCountText::Parse("three").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedberry::sim::sim_flag_table_test
