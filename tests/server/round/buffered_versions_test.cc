#include "server/round/buffered_versions.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "proto/wire.h"
#include "server/round/staleness.h"
#include "tests/server/testing/tiny_model.h"

namespace fedberry::server::buffered_versions_test {
namespace {

using runtime::NamedTensors;

TEST(StalenessWeightTest, PolynomialIsOneOverRootOfOnePlusStaleness) {
  const auto p = StalenessWeighting::kPolynomial;
  EXPECT_DOUBLE_EQ(StalenessWeight(p, 0), 1.0);
  EXPECT_DOUBLE_EQ(StalenessWeight(p, 1), 1.0 / std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(StalenessWeight(p, 3), 0.5);
  EXPECT_DOUBLE_EQ(StalenessWeight(p, 8), 1.0 / 3);
  EXPECT_DOUBLE_EQ(StalenessWeight(StalenessWeighting::kConstant, 8), 1.0);
}

TEST(StalenessWeightTest, ParsesTheTwoNamesAndRefusesOthers) {
  EXPECT_EQ(*ParseStalenessWeighting("constant"),
            StalenessWeighting::kConstant);
  EXPECT_EQ(*ParseStalenessWeighting("polynomial"),
            StalenessWeighting::kPolynomial);
  absl::StatusOr<StalenessWeighting> bad = ParseStalenessWeighting("hinge");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--staleness_weight"),
            std::string::npos);
}

TEST(RebaseTest, MovesTheCurrentModelByTheWeightedTraining) {
  const NamedTensors pulled = {{"w", at::full({2}, 1.0f)},
                               {"n", at::full({1}, 7, at::kLong)}};
  const NamedTensors update = {{"w", at::full({2}, 3.0f)},
                               {"n", at::full({1}, 9, at::kLong)}};
  const NamedTensors current = {{"w", at::full({2}, 10.0f)},
                                {"n", at::full({1}, 8, at::kLong)}};
  const NamedTensors r = Rebase(update, pulled, current, 0.5);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].tensor.scalar_type(), at::kFloat);
  EXPECT_FLOAT_EQ(r[0].tensor[0].item<float>(), 11.0f);  // 10 + 0.5 x 2
  // Counters are the update's own.
  EXPECT_EQ(r[1].tensor[0].item<int64_t>(), 9);
}

class BufferedVersionsTest : public ::testing::Test {
 protected:
  BufferedVersions Make(int buffer, int max_staleness, int concurrency = 0) {
    AsyncOptions o;
    o.buffer = buffer;
    o.max_staleness = max_staleness;
    o.max_concurrency = concurrency;
    return BufferedVersions(o, /*seed=*/1);
  }
};

TEST_F(BufferedVersionsTest, TasksPullTheOpenRoundsModel) {
  BufferedVersions v = Make(2, 3);
  v.Open(1, TinyModel(0));
  const AsyncTask* a = v.Assign("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->round, 1u);
  v.Open(2, TinyModel(5));
  const AsyncTask* b = v.Assign("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->round, 2u);
  EXPECT_NE(a->task_id, b->task_id);
  EXPECT_NE(a->seed, b->seed);
  EXPECT_FLOAT_EQ(v.ModelOf(*v.Find("a"))->at(0).tensor[0].item<float>(), 0);
  EXPECT_FLOAT_EQ(v.ModelOf(*v.Find("b"))->at(0).tensor[0].item<float>(), 5);
  EXPECT_TRUE(v.Check("a", 1, a->task_id).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(v.Check("a", 1, "other")));
  EXPECT_TRUE(absl::IsFailedPrecondition(v.Check("a", 2, a->task_id)));
  EXPECT_TRUE(absl::IsFailedPrecondition(v.Check("nobody", 2, "t")));
}

TEST_F(BufferedVersionsTest, StalenessIsTheRoundsOpenedSinceThePull) {
  BufferedVersions v = Make(3, 5);
  v.Open(1, TinyModel(0));
  v.Assign("a");
  v.Assign("b");
  v.Open(2, TinyModel(1));
  v.Open(3, TinyModel(2));
  absl::StatusOr<int> a = v.Claim("a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, 2);
  EXPECT_TRUE(absl::IsAlreadyExists(v.Claim("a").status()));
  v.Accept("a", *a, *TinyModel(1), 5);
  v.Assign("c");
  absl::StatusOr<int> c = v.Claim("c");
  ASSERT_TRUE(c.ok());
  v.Accept("c", *c, *TinyModel(2), 5);
  EXPECT_EQ(v.buffered(), 2);
  const VersionFigures f = v.TakeFigures();
  EXPECT_EQ(f.updates, 2);
  EXPECT_DOUBLE_EQ(f.staleness_mean, 1.0);
  EXPECT_EQ(f.staleness_max, 2);
  EXPECT_EQ(v.buffered(), 0);
  // b still trains on round 1's model.
  EXPECT_EQ(v.TrainingIds(), std::vector<std::string>{"b"});
}

TEST_F(BufferedVersionsTest, ATaskBeyondMaxStalenessIsRefusedAsStale) {
  BufferedVersions v = Make(1, 1);
  v.Open(1, TinyModel(0));
  const std::string task = v.Assign("a")->task_id;
  v.Open(2, TinyModel(1));
  EXPECT_TRUE(v.Check("a", 1, task).ok());  // one behind: still fresh
  v.Open(3, TinyModel(2));
  absl::Status stale = v.Check("a", 1, task);
  EXPECT_TRUE(absl::IsFailedPrecondition(stale));
  EXPECT_EQ(wire::ReasonOf(stale), wire::kReasonStaleUpdate);
  EXPECT_NE(stale.message().find("--max_staleness=1"), std::string::npos)
      << stale.message();
  // Its model is no longer kept, and its slot is free.
  EXPECT_EQ(v.training(), 0);
  ASSERT_NE(v.Assign("a"), nullptr);
  EXPECT_EQ(v.Find("a")->round, 3u);
}

TEST_F(BufferedVersionsTest, MaxConcurrencyBoundsTheBoardsTraining) {
  BufferedVersions v = Make(2, 3, /*concurrency=*/1);
  v.Open(1, TinyModel(0));
  ASSERT_NE(v.Assign("a"), nullptr);
  EXPECT_EQ(v.Assign("b"), nullptr);
  ASSERT_TRUE(v.Claim("a").ok());
  // A claimed update no longer trains: its slot is free.
  EXPECT_NE(v.Assign("b"), nullptr);
  v.Drop("b");
  v.Unclaim("a");
  EXPECT_EQ(v.training(), 1);
}

TEST_F(BufferedVersionsTest, TheBufferIsFullWithClaimsInFlight) {
  BufferedVersions v = Make(2, 3);
  v.Open(1, TinyModel(0));
  v.Assign("a");
  v.Assign("b");
  ASSERT_TRUE(v.Claim("a").ok());
  EXPECT_FALSE(v.Full());
  ASSERT_TRUE(v.Claim("b").ok());
  EXPECT_TRUE(v.Full());
  v.Unclaim("b");
  EXPECT_FALSE(v.Full());
}

TEST_F(BufferedVersionsTest, ARejoinedBoardKeepsItsTask) {
  BufferedVersions v = Make(2, 3);
  v.Open(1, TinyModel(0));
  const std::string task = v.Assign("old")->task_id;
  v.Rename("old", "new");
  EXPECT_EQ(v.Find("old"), nullptr);
  EXPECT_TRUE(v.Check("new", 1, task).ok());
}

TEST_F(BufferedVersionsTest, ItsStateRestoresTasksModelsAndTheBuffer) {
  BufferedVersions v = Make(3, 3);
  v.Open(1, TinyModel(0));
  const std::string task = v.Assign("a")->task_id;
  v.Open(2, TinyModel(1));
  v.Assign("b");
  ASSERT_TRUE(v.Claim("b").ok());
  v.Accept("b", 0, *TinyModel(7), 9);
  BufferedVersions restored = Make(3, 3);
  restored.Restore(v.State());
  EXPECT_EQ(restored.open_round(), 2u);
  restored.Open(2, TinyModel(1));
  EXPECT_TRUE(restored.Check("a", 1, task).ok());
  EXPECT_FLOAT_EQ(
      restored.ModelOf(*restored.Find("a"))->at(0).tensor[0].item<float>(), 0);
  ASSERT_EQ(restored.buffer().size(), 1u);
  EXPECT_EQ(restored.buffer()[0].samples, 9u);
  EXPECT_FLOAT_EQ(restored.buffer()[0].update[0].tensor[0].item<float>(), 7);
  absl::StatusOr<int> a = restored.Claim("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 1);
  // It hands out the tasks the original would have.
  EXPECT_EQ(restored.Assign("c")->task_id, v.Assign("c")->task_id);
}

// A site gateway's buffer outlives its round only when it restarts mid-way
// and its parent hands down another model: the updates keep what their
// boards' training changed, on the new base.
TEST_F(BufferedVersionsTest, ABufferCarriedIntoANewRoundMovesWithItsBase) {
  BufferedVersions v = Make(3, 3);
  v.Open(1, TinyModel(0));
  v.Assign("a");
  ASSERT_TRUE(v.Claim("a").ok());
  v.Accept("a", 0, *TinyModel(7), 9);
  v.Open(1, TinyModel(0));  // the same round again (a restart): unchanged
  EXPECT_FLOAT_EQ(v.buffer()[0].update[0].tensor[0].item<float>(), 7);
  v.Open(2, TinyModel(10));
  ASSERT_EQ(v.buffer().size(), 1u);
  EXPECT_FLOAT_EQ(v.buffer()[0].update[0].tensor[0].item<float>(), 17);
}

TEST(AsyncOptionsTest, RefusesOutOfRangeSettings) {
  AsyncOptions o;
  EXPECT_TRUE(CheckAsyncOptions(o).ok());
  o.buffer = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(CheckAsyncOptions(o)));
  o.buffer = 2;
  o.max_staleness = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(CheckAsyncOptions(o)));
}

}  // namespace
}  // namespace fedberry::server::buffered_versions_test
