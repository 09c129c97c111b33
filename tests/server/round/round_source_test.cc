#include "server/round/round_source.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace fedberry::server::round_source_test {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const runtime::NamedTensors> Model(float value) {
  return std::make_shared<const runtime::NamedTensors>(
      runtime::NamedTensors{{"w", at::full({2}, value)}});
}

TEST(OwnRounds, RunsTheJobsRoundsEachWithItsOwnDataOrder) {
  v1::TrainConfig train;
  train.set_batch_size(8);
  OwnRounds rounds(3, train, /*seed=*/5);
  auto global = Model(1);
  auto first = rounds.Next(1, global);
  auto second = rounds.Next(2, global);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->round, 1u);
  EXPECT_EQ(first->global, global);
  EXPECT_EQ(first->train.batch_size(), 8u);
  EXPECT_EQ(first->total_rounds, 3u);
  EXPECT_NE(first->train.seed(), second->train.seed());
  EXPECT_EQ(rounds.Next(1, global)->train.seed(), first->train.seed());
  EXPECT_FALSE(rounds.EndsBefore(3));
  EXPECT_TRUE(rounds.EndsBefore(4));
  EXPECT_TRUE(rounds.MayOverlap(2));
  EXPECT_FALSE(rounds.MayOverlap(3));  // nothing follows the last
  EXPECT_TRUE(OwnRounds(0, train, 5).EndsBefore(1));
}

RoundReport Closed(uint64_t round,
                   std::vector<std::pair<uint64_t, float>> samples_and_losses) {
  RoundReport report;
  report.round = round;
  for (const auto& [samples, loss] : samples_and_losses) {
    ClientRoundReport c;
    c.num_samples = samples;
    c.metrics.set_train_loss(loss);
    c.metrics.set_steps(2);
    report.clients.push_back(c);
  }
  report.participants = static_cast<int>(report.clients.size());
  return report;
}

TEST(UpstreamRounds, RunsEachOfferOnceAndSendsItsMeanUp) {
  std::vector<UpstreamResult> sent;
  UpstreamRounds rounds(
      [&](UpstreamResult r) { sent.push_back(std::move(r)); });
  EXPECT_FALSE(rounds.Next(1, Model(0)).has_value());  // no offer yet
  EXPECT_EQ(rounds.total_rounds(), 0u);
  UpstreamRound offer;
  offer.round = 7;
  offer.task_id = "r7-parent";
  offer.total_rounds = 9;
  offer.global = Model(2);
  ASSERT_TRUE(rounds.Offer(offer, *Model(0)).ok());
  auto opening = rounds.Next(1, Model(0));
  ASSERT_TRUE(opening.has_value());
  EXPECT_EQ(opening->round, 7u);
  EXPECT_EQ(opening->global, offer.global);  // the parent's model
  EXPECT_EQ(rounds.total_rounds(), 9u);
  EXPECT_FALSE(rounds.EndsBefore(100));  // the parent says when
  EXPECT_FALSE(rounds.MayOverlap(7));

  rounds.Closed(Closed(7, {{30, 1.0f}, {10, 3.0f}}), Model(4));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].upstream_task_id, "r7-parent");
  EXPECT_EQ(sent[0].weight, 40u);
  EXPECT_DOUBLE_EQ(sent[0].metrics.train_loss(), 1.5);  // sample-weighted
  EXPECT_EQ(sent[0].metrics.steps(), 4u);
  ASSERT_TRUE(sent[0].mean.ok());
  EXPECT_FLOAT_EQ((*sent[0].mean)[0].tensor[0].item<float>(), 4.0f);
  // Run once: no second result, no round until the next offer.
  rounds.Closed(Closed(7, {{30, 1.0f}}), Model(4));
  EXPECT_EQ(sent.size(), 1u);
  EXPECT_FALSE(rounds.Next(8, Model(4)).has_value());
}

TEST(UpstreamRounds, RefusesAnOfferThatDoesNotFitTheGatewaysModel) {
  UpstreamRounds rounds([](UpstreamResult) {});
  UpstreamRound offer;
  offer.round = 3;
  absl::Status none = rounds.Offer(offer, *Model(0));
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(none.message()), HasSubstr("no model"));
  offer.global = std::make_shared<const runtime::NamedTensors>(
      runtime::NamedTensors{{"other", at::zeros({3})}});
  absl::Status misfit = rounds.Offer(offer, *Model(0));
  EXPECT_EQ(misfit.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(misfit.message()), HasSubstr("does not fit"));
  EXPECT_FALSE(rounds.Next(3, Model(0)).has_value());  // nothing offered
}

TEST(UpstreamRounds, ARefusedRoundTellsTheParentWhy) {
  std::vector<UpstreamResult> sent;
  UpstreamRounds rounds(
      [&](UpstreamResult r) { sent.push_back(std::move(r)); });
  UpstreamRound offer;
  offer.round = 2;
  offer.task_id = "t";
  offer.global = Model(1);
  ASSERT_TRUE(rounds.Offer(offer, *Model(0)).ok());
  RoundReport report = Closed(2, {{10, 1.0f}});
  report.refused_result = "the aggregate is not finite";
  rounds.Closed(report, nullptr);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].mean.ok());
  EXPECT_TRUE(absl::StrContains(sent[0].mean.status().message(),
                                "the aggregate is not finite"))
      << sent[0].mean.status();
}

}  // namespace
}  // namespace fedberry::server::round_source_test
