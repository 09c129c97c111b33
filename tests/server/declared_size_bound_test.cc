#include "server/declared_size_bound.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "proto/wire.h"

namespace fedberry::server::declared_size_bound_test {
namespace {

TEST(DeclaredSizeBound, NoBoundWithoutAFleet) {
  DeclaredSizeBound bound(10);
  bound.SetFleet({100, 200});  // fewer than kMinBoards
  EXPECT_EQ(bound.median(), 0u);
  EXPECT_TRUE(bound.CheckJoin(uint64_t{1} << 40, 0).ok());
  EXPECT_EQ(bound.Cap(uint64_t{1} << 40, 0), uint64_t{1} << 40);
}

TEST(DeclaredSizeBound, ADeclarationBeyondTheRatioIsRefusedAndCapped) {
  DeclaredSizeBound bound(10);
  bound.SetFleet({100, 300, 200, 5000});  // median 300 (upper middle)
  EXPECT_EQ(bound.median(), 300u);
  EXPECT_TRUE(bound.CheckJoin(3000, 0).ok());
  const absl::Status refused = bound.CheckJoin(uint64_t{1} << 40, 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_EQ(wire::ReasonOf(refused), wire::kReasonSamplesAboveFleet);
  EXPECT_NE(refused.message().find("may join again later"), std::string::npos)
      << refused;
  EXPECT_NE(refused.message().find("median of 300"), std::string::npos)
      << refused;
  EXPECT_NE(refused.message().find("--max_samples_ratio"), std::string::npos);
  EXPECT_EQ(bound.Cap(uint64_t{1} << 40, 0), 3000u);
  EXPECT_EQ(bound.Cap(250, 0), 250u);
}

TEST(DeclaredSizeBound, AGatewaysBoundIsPerBoard) {
  DeclaredSizeBound bound(2);
  bound.SetFleet({100, 100, 100});
  EXPECT_TRUE(bound.CheckJoin(20000, 100).ok());  // 200 a board
  EXPECT_FALSE(bound.CheckJoin(20001, 100).ok());
  EXPECT_EQ(SamplesPerBoard(20000, 100), 200u);
  EXPECT_EQ(SamplesPerBoard(7, 0), 7u);
}

TEST(DeclaredSizeBound, OffAndHugeBoundsDoNotOverflow) {
  DeclaredSizeBound off(0);
  off.SetFleet({1, 1, 1});
  EXPECT_EQ(off.median(), 0u);
  DeclaredSizeBound huge(1e9);
  huge.SetFleet({uint64_t{1} << 40, uint64_t{1} << 40, uint64_t{1} << 40});
  EXPECT_EQ(huge.Cap(std::numeric_limits<uint64_t>::max(), 1000000),
            std::numeric_limits<uint64_t>::max());
}

}  // namespace
}  // namespace fedberry::server::declared_size_bound_test
