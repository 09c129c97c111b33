// Differential privacy on the server: Poisson cohorts, the Gaussian
// mechanism around a strategy, and the budget the coordinator charges.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "privacy/rdp_accountant.h"
#include "server/privacy/dp_options.h"
#include "server/privacy/forwarded_sum.h"
#include "server/privacy/gaussian_sum.h"
#include "server/privacy/local_privacy_budget.h"
#include "server/privacy/privacy_budget.h"
#include "server/round/cohort_selection.h"

namespace fedberry::server::privacy_test {
namespace {

std::vector<std::string> Boards(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back("b" + std::to_string(1000 + i));
  return ids;
}

TEST(CohortSelection, SharedCohortsTakeTheirShareOverSelected) {
  std::mt19937_64 rng(1);
  Cohort c = SharedCohorts(0.3, 0, 1.5, 2).Choose(Boards(10), rng);
  EXPECT_EQ(c.needed, 3u);
  EXPECT_EQ(c.members.size(), 5u);  // ceil(1.5 * 3)
  std::set<std::string> unique(c.members.begin(), c.members.end());
  EXPECT_EQ(unique.size(), 5u);
}

TEST(CohortSelection, PoissonCohortsDrawEachBoardWithProbabilityQ) {
  const PoissonCohorts poisson(0.1);
  std::mt19937_64 rng(7);
  double total = 0;
  std::map<std::string, int> times;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) {
    Cohort c = poisson.Choose(Boards(50), rng);
    EXPECT_DOUBLE_EQ(c.expected, 5.0);
    EXPECT_EQ(c.needed, c.members.size());
    total += c.members.size();
    for (const auto& id : c.members) ++times[id];
  }
  // Mean 5, standard error sqrt(50 * 0.09 / 4000) = 0.034.
  EXPECT_NEAR(total / draws, 5.0, 0.15);
  // Every board about q of the time (standard error 0.0047).
  for (const auto& [id, n] : times) EXPECT_NEAR(n / double(draws), 0.1, 0.025);
  // The same generator state draws the same cohort (restart).
  std::mt19937_64 a(3), b(3);
  EXPECT_EQ(poisson.Choose(Boards(50), a).members,
            poisson.Choose(Boards(50), b).members);
}

runtime::NamedTensors Tensors(std::vector<float> w) {
  return {{"w", torch::tensor(w)},
          {"n", torch::tensor({int64_t{5}}, torch::kInt64)}};
}

std::unique_ptr<Strategy> FedAvg(const runtime::NamedTensors& model) {
  auto s = MakeStrategy(StrategyOptions{}, model);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

DpOptions Dp(double clip, double z) {
  DpOptions o;
  o.clip = clip;
  o.noise_multiplier = z;
  o.sampling_rate = 0.5;
  o.noise_seed = 42;
  return o;
}

// A round of the Gaussian sum (clip 1) around FedAvg on `global`, with a
// noise so small that the clipped mean shows to 1e-6; its clip counts go
// to `counts`.
struct DpRound {
  std::unique_ptr<Strategy> strategy;
  std::unique_ptr<RoundAggregator> round;
};
DpRound TinyNoiseRound(std::shared_ptr<const runtime::NamedTensors> global,
                       std::shared_ptr<ClipState> counts) {
  DpRound r{AddGaussianNoise(FedAvg(*global), Dp(1.0, 1e-9), std::move(counts)),
            nullptr};
  auto round = r.strategy->BeginRound(std::move(global));
  EXPECT_TRUE(round.ok()) << round.status();
  if (round.ok()) r.round = *std::move(round);
  return r;
}

TEST(GaussianSum, ClipsEachUpdateAndDividesByTheExpectedCohort) {
  auto global = std::make_shared<const runtime::NamedTensors>(Tensors({1, 1}));
  auto counts = std::make_shared<ClipState>();
  DpRound dp = TinyNoiseRound(global, counts);
  auto& round = dp.round;
  ASSERT_TRUE(round);
  round->Expect(4.0);
  ASSERT_TRUE(round->Add(Tensors({4, 5}), 1000).ok());  // norm 5: clipped
  ASSERT_TRUE(round->Add(Tensors({1.5f, 1}), 1).ok());  // norm 0.5: kept
  auto next = round->Result();
  ASSERT_TRUE(next.ok()) << next.status();
  // (0.6 + 0.5, 0.8 + 0) / 4, weights ignored.
  EXPECT_NEAR((*next)[0].tensor[0].item<float>(), 1 + 1.1 / 4, 1e-6);
  EXPECT_NEAR((*next)[0].tensor[1].item<float>(), 1 + 0.8 / 4, 1e-6);
  EXPECT_EQ((*next)[1].tensor.item<int64_t>(), 5);  // the round's integers
  EXPECT_EQ(counts->updates, 2);
  EXPECT_EQ(counts->clipped, 1);
}

TEST(GaussianSum, AddsNoiseOfStandardDeviationZTimesClipOverTheCohort) {
  const int64_t n = 200000;
  auto global = std::make_shared<const runtime::NamedTensors>(
      runtime::NamedTensors{{"w", torch::zeros({n})}});
  auto dp = AddGaussianNoise(FedAvg(*global), Dp(2.0, 1.5), nullptr);
  auto round = dp->BeginRound(global);
  ASSERT_TRUE(round.ok());
  (*round)->Expect(6.0);
  ASSERT_TRUE((*round)->Add(*global, 1).ok());  // a zero update
  auto next = (*round)->Result();
  ASSERT_TRUE(next.ok());
  const at::Tensor w = (*next)[0].tensor.to(torch::kFloat64);
  // std 1.5 * 2 / 6 = 0.5; the sample's std has standard error 0.5 /
  // sqrt(2n) = 0.0008, its mean 0.0011.
  EXPECT_NEAR(w.std().item<double>(), 0.5, 0.005);
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.006);
  // A fixed seed draws the same noise; another seed other noise.
  auto again = AddGaussianNoise(FedAvg(*global), Dp(2.0, 1.5), nullptr);
  auto r2 = again->BeginRound(global);
  (*r2)->Expect(6.0);
  ASSERT_TRUE((*r2)->Add(*global, 1).ok());
  EXPECT_TRUE(
      torch::equal((*r2->get()).Result()->at(0).tensor, (*next)[0].tensor));
}

TEST(DpOptions, RefusesWhatVoidsTheGuarantee) {
  const runtime::NamedTensors model = Tensors({0, 0});
  EXPECT_TRUE(CheckDpOptions(Dp(1, 1), "fedavg", model, 1).ok());
  EXPECT_TRUE(CheckDpOptions(DpOptions{}, "krum", model, 1).ok());  // off
  auto krum = CheckDpOptions(Dp(1, 1), "krum", model, 1);
  EXPECT_NE(krum.message().find("krum"), std::string::npos);
  EXPECT_FALSE(CheckDpOptions(Dp(0, 1), "fedavg", model, 1).ok());
  EXPECT_FALSE(CheckDpOptions(Dp(1, 0), "fedavg", model, 1).ok());
  DpOptions q = Dp(1, 1);
  q.sampling_rate = 0;
  EXPECT_NE(CheckDpOptions(q, "fedavg", model, 1).message().find("--fraction"),
            std::string::npos);
  runtime::NamedTensors with_bn = {{"w", torch::zeros({2})},
                                   {"running_mean", torch::zeros({2})}};
  auto bn = CheckDpOptions(Dp(1, 1), "fedavg", with_bn, 1);
  EXPECT_NE(bn.message().find("buffer"), std::string::npos);
}

TEST(PrivacyBudget, ChargesEveryRoundAsTheAccountantDoes) {
  DpOptions o = Dp(1.0, 1.1);
  o.sampling_rate = 0.1;
  PrivacyBudget budget(o);
  privacy::RdpAccountant reference;
  v1::TrainConfig train;
  budget.Shape(train);
  EXPECT_EQ(train.dp_clip(), 1.0);
  for (int round = 1; round <= 5; ++round) {
    RoundReport report;
    report.round = round;
    budget.Charge(report);
    ASSERT_TRUE(reference.Compose(0.1, 1.1).ok());
    ASSERT_TRUE(report.privacy.has_value());
    EXPECT_EQ(report.privacy->steps, round);
    EXPECT_DOUBLE_EQ(report.privacy->epsilon, reference.Spent(1e-5)->epsilon);
    EXPECT_EQ(report.privacy->sampling_rate, 0.1);
  }
  // A restarted server goes on from the same spending, to the bit.
  PrivacyBudget restored(o);
  ASSERT_TRUE(restored.Restore(budget.State()).ok());
  RoundReport a, b;
  budget.Charge(a);
  restored.Charge(b);
  EXPECT_DOUBLE_EQ(a.privacy->epsilon, b.privacy->epsilon);
  EXPECT_EQ(b.privacy->steps, 6);
}

TEST(PrivacyBudget, EndsTheJobBeforeARoundWouldExceedTheTarget) {
  DpOptions o = Dp(1.0, 1.0);
  o.sampling_rate = 0.2;
  privacy::RdpAccountant reference;
  ASSERT_TRUE(reference.Compose(0.2, 1.0, 3).ok());
  const double after3 = reference.Spent(1e-5)->epsilon;
  ASSERT_TRUE(reference.Compose(0.2, 1.0).ok());
  o.target_epsilon = (after3 + reference.Spent(1e-5)->epsilon) / 2;
  PrivacyBudget budget(o);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(budget.EndsBefore(), "") << "round " << i + 1;
    RoundReport r;
    budget.Charge(r);
  }
  const std::string why = budget.EndsBefore();
  EXPECT_NE(why.find("--dp_target_epsilon"), std::string::npos) << why;
}

TEST(PrivacyBudget, RefusesAStateThatDoesNotFit) {
  PrivacyBudget budget(Dp(1, 1));
  EXPECT_TRUE(budget.Restore("").ok());  // a job that ran without DP
  EXPECT_FALSE(budget.Restore("{").ok());
  EXPECT_FALSE(
      budget.Restore(R"({"steps":1,"orders":[2,3],"rdp":[1,1]})").ok());
  PrivacyBudget spent(Dp(1, 1));
  RoundReport r;
  spent.Charge(r);
  std::string state = spent.State();
  const size_t at = state.find("\"rdp\":[");
  ASSERT_NE(at, std::string::npos);
  state.insert(at + 7, "-1,");  // one value too many, and negative
  EXPECT_FALSE(budget.Restore(state).ok());
}

TEST(AdaptiveClipping, SplitsTheNoiseAsTensorFlowFederatedDoes) {
  DpOptions o = Dp(0.1, 1.0);
  EXPECT_EQ(ValueNoiseMultiplier(o, 1.0), 1.0);  // fixed clipping: all of it
  o.adaptive_clip = true;
  // (z^-2 - (2 sigma_b)^-2)^-1/2 with z = 1, sigma_b = 1.
  EXPECT_NEAR(ValueNoiseMultiplier(o, 1.0), 1 / std::sqrt(0.75), 1e-12);
  EXPECT_EQ(ClippedCountStddev(o, 100), 5.0);  // 0.05 x expected
  EXPECT_EQ(ClippedCountStddev(o, 10), 1.0);   // raised to z
  o.clipped_count_stddev = 0.4;                // <= z / 2
  EXPECT_NE(CheckDpOptions(o, "fedavg", Tensors({0}), 1)
                .message()
                .find("--dp_clipped_count_stddev"),
            std::string::npos);
}

TEST(AdaptiveClipping, TheBoundFollowsTheMedianNorm) {
  DpOptions o = Dp(2.0, 0.01);
  o.adaptive_clip = true;
  o.sampling_rate = 1;
  PrivacyBudget budget(o);
  auto global = std::make_shared<const runtime::NamedTensors>(
      runtime::NamedTensors{{"w", torch::zeros({1})}});
  auto dp = budget.Aggregate(FedAvg(*global));
  std::vector<double> bounds;
  for (int round = 1; round <= 40; ++round) {
    v1::TrainConfig train;
    budget.Shape(train);
    bounds.push_back(train.dp_clip());
    auto r = dp->BeginRound(global);
    ASSERT_TRUE(r.ok());
    (*r)->Expect(20);
    // Norms 1..20: the median is 10.5.
    for (int i = 1; i <= 20; ++i) {
      ASSERT_TRUE((*r)->Add({{"w", torch::tensor({float(i)})}}, 1).ok());
    }
    ASSERT_TRUE((*r)->Result().ok());
    RoundReport report;
    report.participants = 20;
    budget.Charge(report);
    EXPECT_EQ(report.privacy->clip, bounds.back());  // the round's bound
  }
  // From 2 it rises (at most x1.105 a round) and settles near the median.
  EXPECT_GT(bounds[10], bounds[0] * 2);
  EXPECT_GT(budget.clip(), 7.0);
  EXPECT_LT(budget.clip(), 15.0);
  // The bound is in the checkpoint.
  PrivacyBudget restored(o);
  ASSERT_TRUE(restored.Restore(budget.State()).ok());
  EXPECT_EQ(restored.clip(), budget.clip());
}

TEST(LocalPrivacyBudget, ChargesEachBoardTheRoundsItTookPartIn) {
  DpOptions o = Dp(1.0, 2.0);
  o.local = true;
  LocalPrivacyBudget budget(o);
  v1::TrainConfig train;
  budget.Shape(train);
  EXPECT_EQ(train.dp_clip(), 1.0);
  EXPECT_EQ(train.dp_local_noise_multiplier(), 2.0);
  auto round = [&](std::vector<std::string> boards) {
    RoundReport r;
    for (const auto& b : boards) {
      ClientRoundReport c;
      c.client_name = b;
      c.metrics.set_update_clipped(b == "a");
      r.clients.push_back(c);
    }
    budget.Charge(r);
    return *r.privacy;
  };
  round({"a", "b"});
  const PrivacyFigures p = round({"a", "c"});
  EXPECT_TRUE(p.local);
  EXPECT_EQ(p.steps, 2);  // board a, twice
  EXPECT_DOUBLE_EQ(p.clipped_fraction, 0.5);
  // Replacement doubles the sensitivity: multiplier z / 2, no sampling.
  privacy::RdpAccountant reference;
  ASSERT_TRUE(reference.Compose(1.0, 1.0, 2).ok());
  EXPECT_DOUBLE_EQ(p.epsilon, reference.Spent(1e-5)->epsilon);
  LocalPrivacyBudget restored(o);
  ASSERT_TRUE(restored.Restore(budget.State()).ok());
  EXPECT_EQ(restored.most_rounds(), 2);
  // A central budget's record is not a local one.
  EXPECT_FALSE(restored.Restore(PrivacyBudget(Dp(1, 1)).State()).ok());
  EXPECT_FALSE(restored.Restore(R"({"local":true,"rounds":{"a":-1}})").ok());
}

TEST(LocalPrivacyBudget, TheServerOnlyAveragesTheBoardsNoisyUpdates) {
  DpOptions o = Dp(1.0, 5.0);
  o.local = true;
  auto global = std::make_shared<const runtime::NamedTensors>(Tensors({0, 0}));
  auto dp = AddGaussianNoise(FedAvg(*global), o, nullptr);
  auto round = dp->BeginRound(global);
  ASSERT_TRUE(round.ok());
  (*round)->Expect(10);  // ignored: the mean of what arrived
  ASSERT_TRUE((*round)->Add(Tensors({30, 40}), 7).ok());  // not clipped again
  ASSERT_TRUE((*round)->Add(Tensors({10, 0}), 1).ok());
  auto next = (*round)->Result();
  ASSERT_TRUE(next.ok());
  EXPECT_FLOAT_EQ((*next)[0].tensor[0].item<float>(), 20);
  EXPECT_FLOAT_EQ((*next)[0].tensor[1].item<float>(), 20);
  EXPECT_NE(CheckDpOptions(
                [&] {
                  DpOptions a = o;
                  a.adaptive_clip = true;
                  return a;
                }(),
                "fedavg", *global, 1)
                .message()
                .find("--dp_local"),
            std::string::npos);
}

TEST(CohortSelection, PoissonCohortsTakeEveryGatewayAndCountItsBoards) {
  const PoissonCohorts poisson(0.5);
  std::mt19937_64 rng(11);
  // b1002 is a site gateway for 6 boards: it draws them itself.
  const std::vector<uint32_t> boards = {0, 0, 6, 0};
  int without = 0;
  for (int i = 0; i < 200; ++i) {
    Cohort c = poisson.Choose(Boards(4), boards, rng);
    EXPECT_DOUBLE_EQ(c.expected, 0.5 * (3 + 6));
    EXPECT_NE(std::find(c.members.begin(), c.members.end(), "b1002"),
              c.members.end());
    if (c.members.size() == 1) ++without;
  }
  EXPECT_GT(without, 0);  // the boards are still drawn
  // Without gateways, the draw is the one the two-argument call makes.
  std::mt19937_64 a(3), b(3);
  EXPECT_EQ(
      poisson.Choose(Boards(50), a).members,
      poisson.Choose(Boards(50), std::vector<uint32_t>(50, 0), b).members);
}

TEST(ForwardedSum, RefusesCountsNoGatewaySends) {
  v1::ForwardedSum sum;
  sum.set_updates(3);
  sum.set_clipped(1);
  EXPECT_TRUE(CheckForwardedSum(sum, 3).ok());
  EXPECT_NE(CheckForwardedSum(sum, 0).message().find("a board sent"),
            std::string::npos);
  EXPECT_NE(CheckForwardedSum(sum, 2).message().find("declared 2 boards"),
            std::string::npos);
  sum.set_clipped(4);
  EXPECT_EQ(CheckForwardedSum(sum, 3).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ForwardedSum, IsBoundedByItsCountTimesTheClip) {
  EXPECT_EQ(*ForwardedSumScale(1.5, 2, 1.0), 1.0);
  EXPECT_EQ(*ForwardedSumScale(2.0, 2, 1.0), 1.0);  // exactly at the bound
  // Within the slack of rounding and encodings: clipped to the bound.
  EXPECT_DOUBLE_EQ(*ForwardedSumScale(2.01, 2, 1.0), 2.0 / 2.01);
  auto beyond = ForwardedSumScale(2.5, 2, 1.0);
  EXPECT_EQ(beyond.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(beyond.status().message().find("beyond 2 x the clip bound 1"),
            std::string::npos)
      << beyond.status();
  EXPECT_FALSE(ForwardedSumScale(0.1, 0, 1.0).ok());  // an empty sum is 0
  EXPECT_TRUE(ForwardedSumScale(0, 0, 1.0).ok());
  EXPECT_EQ(*ForwardedSumScale(50, 2, 0), 1.0);  // local DP: noisy, unbounded
  EXPECT_FALSE(ForwardedSumScale(NAN, 2, 1.0).ok());
}

TEST(GaussianSum, AddsAGatewaysSumToItsBoardsAndNoisesTheTotalOnce) {
  auto counts = std::make_shared<ClipState>();
  auto global = std::make_shared<const runtime::NamedTensors>(Tensors({1, 1}));
  const std::unique_ptr<RoundAggregator> round =
      std::move(TinyNoiseRound(global, counts).round);
  ASSERT_TRUE(round);
  round->Expect(5.0);  // q x (1 board + a gateway's 9) = 0.5 x 10
  ASSERT_TRUE(round->Add(Tensors({4, 5}), 1000).ok());  // clipped: 0.6, 0.8
  // A gateway's sum of 3 clipped updates, 2 at the bound: norm 2.5 <= 3.
  ASSERT_TRUE(round->AddSum(Tensors({2.5f, 3}), 3, 2).ok());
  // One beyond its count x clip is refused and changes nothing.
  auto beyond = round->AddSum(Tensors({5, 1}), 2, 2);
  EXPECT_EQ(beyond.code(), absl::StatusCode::kInvalidArgument);
  auto next = round->Result();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_NEAR((*next)[0].tensor[0].item<float>(), 1 + (0.6 + 1.5) / 5, 1e-6);
  EXPECT_NEAR((*next)[0].tensor[1].item<float>(), 1 + (0.8 + 2.0) / 5, 1e-6);
  EXPECT_EQ(counts->updates, 4);
  EXPECT_EQ(counts->clipped, 3);
  // A round without DP takes no forwarded sum.
  auto plain = FedAvg(*global)->BeginRound(global);
  EXPECT_NE((*plain)
                ->AddSum(Tensors({1, 1}), 1, 0)
                .message()
                .find("does not run under differential privacy"),
            std::string::npos);
}

TEST(ForwardedSum, AddToRoundSendsASumToAddSumAndAnUpdateToAdd) {
  auto global = std::make_shared<const runtime::NamedTensors>(Tensors({0, 0}));
  DpRound dp = TinyNoiseRound(global, std::make_shared<ClipState>());
  ASSERT_TRUE(dp.round);
  v1::UpdateHeader board;
  board.set_num_samples(7);
  ASSERT_TRUE(AddToRound(*dp.round, board, 0, Tensors({0, 3})).ok());
  v1::UpdateHeader gateway = board;
  gateway.mutable_metrics()->mutable_forwarded_sum()->set_updates(2);
  EXPECT_FALSE(AddToRound(*dp.round, gateway, 0, Tensors({0, 2})).ok());
  ASSERT_TRUE(AddToRound(*dp.round, gateway, 4, Tensors({0, 2})).ok());
  EXPECT_EQ(dp.round->updates(), 3);
}

}  // namespace
}  // namespace fedberry::server::privacy_test
