#include "server/round/round_publisher.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace fedberry::server::round_publisher_test {
namespace {

// A round's sum whose result is fixed by the test.
class FixedSum : public RoundAggregator {
 public:
  explicit FixedSum(absl::StatusOr<runtime::NamedTensors> result)
      : result_(std::move(result)) {}
  absl::Status Add(const runtime::NamedTensors&, double) override {
    return absl::OkStatus();
  }
  int updates() const override { return 1; }
  absl::StatusOr<runtime::NamedTensors> Result() override { return result_; }

 private:
  absl::StatusOr<runtime::NamedTensors> result_;
};

runtime::NamedTensors Model(float value) {
  return {{"w", at::full({2, 2}, value)}};
}

// An evaluator that records what it was asked and answers `loss`.
struct FakeEvaluator {
  double loss = 0.5;
  std::vector<int64_t> asked;
  Evaluator Get() {
    return [this](const runtime::NamedTensors&,
                  int64_t max_samples) -> absl::StatusOr<runtime::EvalResult> {
      asked.push_back(max_samples);
      runtime::EvalResult r;
      r.mean_loss = loss;
      r.accuracy = 0.9;
      r.samples = max_samples > 0 ? max_samples : 1000;
      return r;
    };
  }
};

TEST(MakeRoundResult, PublishesAFiniteEvaluatedAggregate) {
  FixedSum sum(Model(1));
  FakeEvaluator eval;
  RoundReport report;
  RoundResult result = MakeRoundResult(sum, eval.Get(), false, report);
  ASSERT_NE(result.model, nullptr);
  EXPECT_FALSE(result.overlap);
  EXPECT_EQ(report.refused_result, "");
  EXPECT_EQ(eval.asked, std::vector<int64_t>{0});  // the whole set
  ASSERT_TRUE(report.eval.has_value());
  EXPECT_DOUBLE_EQ(report.eval->mean_loss, 0.5);
}

TEST(MakeRoundResult, RefusesANonFiniteAggregateWithoutEvaluatingIt) {
  FixedSum sum(Model(std::numeric_limits<float>::quiet_NaN()));
  FakeEvaluator eval;
  RoundReport report;
  RoundResult result = MakeRoundResult(sum, eval.Get(), false, report);
  EXPECT_EQ(result.model, nullptr);
  EXPECT_TRUE(absl::StrContains(report.refused_result, "not finite"))
      << report.refused_result;
  EXPECT_TRUE(eval.asked.empty());
}

TEST(MakeRoundResult, RefusesAFailedAggregationAndSaysSo) {
  FixedSum sum(absl::FailedPreconditionError("krum needs 5 updates"));
  RoundReport report;
  RoundResult result = MakeRoundResult(sum, nullptr, false, report);
  EXPECT_EQ(result.model, nullptr);
  EXPECT_EQ(report.refused_result, "aggregation failed: krum needs 5 updates");
}

TEST(MakeRoundResult, OverlappedItProbesAndRefusesANonFiniteProbe) {
  FakeEvaluator eval;
  {
    FixedSum sum(Model(1));
    RoundReport report;
    RoundResult result = MakeRoundResult(sum, eval.Get(), true, report);
    ASSERT_NE(result.model, nullptr);
    EXPECT_TRUE(result.overlap);
    EXPECT_EQ(eval.asked, std::vector<int64_t>{kEvaluationProbeSamples});
    EXPECT_FALSE(report.eval.has_value());  // a probe is no figure
  }
  eval.loss = std::nan("");
  FixedSum sum(Model(1));
  RoundReport report;
  RoundResult result = MakeRoundResult(sum, eval.Get(), true, report);
  EXPECT_EQ(result.model, nullptr);
  EXPECT_FALSE(result.overlap);
  EXPECT_TRUE(absl::StrContains(report.refused_result, "first 100 samples"))
      << report.refused_result;
}

// What a publisher did, in order.
struct Recorder {
  std::vector<std::string> events;
  absl::Mutex mu;
  void Add(std::string e) {
    absl::MutexLock lock(&mu);
    events.push_back(std::move(e));
  }
};

TEST(RoundPublisher, PersistsBeforeItReportsAndOverlapsTheWholeEvaluation) {
  Recorder recorder;
  FakeEvaluator eval;
  RoundPublisher publisher(
      eval.Get(),
      [&](const RoundReport& r) {
        recorder.Add(absl::StrCat("report ", r.round,
                                  r.eval_overlapped ? " overlapped" : ""));
      },
      [&](const RoundReport& r) {
        recorder.Add(absl::StrCat("record ", r.round));
        FederationSnapshot s;
        s.next_round = r.round + 1;
        return s;
      });
  publisher.SetSnapshotSink([&](const FederationSnapshot& s) {
    recorder.Add(absl::StrCat("persist ", s.next_round));
  });
  RoundResult plain{std::make_shared<const runtime::NamedTensors>(Model(1)),
                    false};
  RoundResult overlapped = plain;
  overlapped.overlap = true;
  RoundReport report;
  report.round = 1;
  FederationSnapshot snapshot;
  snapshot.next_round = 2;
  publisher.Publish(report, snapshot, plain, false);
  report.round = 2;
  snapshot.next_round = 3;
  publisher.Publish(report, snapshot, overlapped, false);  // on a thread
  publisher.FinishPending();
  report.round = 3;
  snapshot.next_round = 4;
  publisher.Publish(report, snapshot, overlapped, true);  // the last: now
  EXPECT_EQ(recorder.events,
            (std::vector<std::string>{
                "persist 2", "report 1",               // plain
                "persist 3", "record 2", "persist 3",  // overlapped
                "report 2 overlapped", "persist 4", "record 3", "persist 4",
                "report 3 overlapped"}));
  EXPECT_EQ(eval.asked, (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace fedberry::server::round_publisher_test
