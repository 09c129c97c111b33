// The SecAgg+ neighbour graph: symmetric, no self loops, K neighbours each
// (one board K + 1 when n and K are both odd), the complete graph at
// K = n - 1, the same graph from the same seed and another from another,
// and every pair about equally likely to be neighbours over seeds.
#include "secagg/neighbours.h"

#include <gtest/gtest.h>

#include "secagg/testing/fake_random.h"

namespace fedberry::secagg::neighbours_test {
namespace {

GraphSeed SeedOf(uint64_t value) {
  GraphSeed seed;
  testing::SeededRandom random(value);
  EXPECT_TRUE(random.Fill(absl::MakeSpan(seed)).ok());
  return seed;
}

NeighbourGraph Make(int n, int k, uint64_t seed) {
  absl::StatusOr<NeighbourGraph> graph =
      NeighbourGraph::Create(n, k, SeedOf(seed));
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *std::move(graph);
}

TEST(NeighboursTest, SymmetricWithKNeighboursEach) {
  for (int n = 2; n <= 24; ++n) {
    for (int k = 1; k < n; ++k) {
      const NeighbourGraph g = Make(n, k, n * 100 + k);
      int above = 0;
      for (uint32_t a = 0; a < static_cast<uint32_t>(n); ++a) {
        EXPECT_FALSE(g.Adjacent(a, a));
        const int degree = static_cast<int>(g.Of(a).size());
        EXPECT_GE(degree, k) << n << " " << k << " " << a;
        EXPECT_LE(degree, k + 1) << n << " " << k << " " << a;
        above += degree - k;
        for (uint32_t b : g.Of(a)) {
          EXPECT_TRUE(g.Adjacent(b, a)) << n << " " << k << " " << a << b;
        }
      }
      EXPECT_EQ(above, (n % 2 == 1 && k % 2 == 1) ? 1 : 0) << n << " " << k;
    }
  }
}

TEST(NeighboursTest, CompleteGraphAtKEqualsNMinusOne) {
  const NeighbourGraph g = Make(7, 6, 3);
  for (uint32_t a = 0; a < 7; ++a) {
    for (uint32_t b = 0; b < 7; ++b) EXPECT_EQ(g.Adjacent(a, b), a != b);
  }
}

TEST(NeighboursTest, SeedDecidesTheGraph) {
  auto lists = [](const NeighbourGraph& g) {
    std::vector<std::vector<uint32_t>> out;
    out.reserve(g.size());
    for (int b = 0; b < g.size(); ++b) {
      out.emplace_back(g.Of(b).begin(), g.Of(b).end());
    }
    return out;
  };
  EXPECT_EQ(lists(Make(50, 16, 9)), lists(Make(50, 16, 9)));
  EXPECT_NE(lists(Make(50, 16, 9)), lists(Make(50, 16, 10)));
}

// Over 3000 seeds, each of the 45 pairs of 10 boards is adjacent with
// frequency K / (n - 1) = 4/9 = 0.444 (the standard error is 0.009).
TEST(NeighboursTest, PairsEquallyLikelyOverSeeds) {
  const int n = 10;
  const int k = 4;
  const int runs = 3000;
  std::vector<int> count(static_cast<size_t>(n) * n, 0);
  for (int s = 0; s < runs; ++s) {
    const NeighbourGraph g = Make(n, k, 5000 + s);
    for (uint32_t a = 0; a < n; ++a) {
      for (uint32_t b : g.Of(a)) ++count[a * n + b];
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      EXPECT_NEAR(count[a * n + b] / double(runs), 4.0 / 9, 0.05) << a << b;
    }
  }
}

TEST(NeighboursTest, RefusesImpossibleGraphs) {
  for (auto [n, k] : {std::pair{1, 0}, {2, 0}, {5, 5}, {5, -1}, {70000, 4}}) {
    EXPECT_EQ(NeighbourGraph::Create(n, k, SeedOf(1)).status().code(),
              absl::StatusCode::kInvalidArgument)
        << n << " " << k;
  }
  const NeighbourGraph g = Make(5, 2, 1);
  EXPECT_TRUE(g.Of(5).empty());
  EXPECT_FALSE(g.Adjacent(0, 9));
}

}  // namespace
}  // namespace fedberry::secagg::neighbours_test
