#include "tiers/gateway_trainer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <thread>

#include "runtime/training_plan.h"
#include "tiers/clipped_sum.h"

namespace fedberry::tiers::gateway_trainer_test {
namespace {

using runtime::NamedTensors;

NamedTensors Model(float w) { return {{"w", at::full({2, 2}, w)}}; }

v1::TrainingPlan Plan() {
  v1::TrainConfig config;
  config.set_model("lenet5");
  return runtime::DefaultImagePlan(config);
}

// A gateway's own site in one process: its coordinator in upstream mode, made
// when the trainer is given the parent's plan, and boards that join it.
class GatewayTrainerTest : public ::testing::Test {
 protected:
  GatewayTrainerTest()
      : trainer_(
            {/*min_boards=*/2, absl::Milliseconds(5)},
            [this](const v1::TrainingPlan&, const runtime::VerifiedModelFile*,
                   server::UpstreamSink sink)
                -> absl::StatusOr<server::RoundCoordinator*> {
              server::CoordinatorOptions o;
              o.upstream = true;
              o.upstream_sink = std::move(sink);
              o.min_clients_per_round = 2;
              o.min_clients_to_start = 2;
              o.max_update_ratio = 0;
              o.async = async_;
              ForwardClippedSums(privacy_, o);  // as fedberry-server does
              ++sites_started_;
              site_ = server::RoundCoordinator::Create(o, Model(0), nullptr,
                                                       nullptr)
                          .value();
              return site_.get();
            },
            privacy_) {}

  std::string JoinBoard(const std::string& name, uint64_t samples) {
    v1::JoinRequest r;
    r.set_client_name(name);
    r.set_num_samples(samples);
    auto joined = site_->Join(r);
    EXPECT_TRUE(joined.ok()) << joined.status();
    return joined.ok() ? joined->client_id() : "";
  }

  // Joins boards a (10 samples) and b (30) while UsePlan waits for them.
  void StartWithTwoBoards() {
    std::thread use(
        [&] { ASSERT_TRUE(trainer_.UsePlan(Plan(), nullptr).ok()); });
    while (trainer_.site() == nullptr) std::this_thread::yield();
    a_ = JoinBoard("a", 10);
    b_ = JoinBoard("b", 30);
    use.join();
  }

  // Runs the site's rounds until `until` holds.
  void Drive(const std::function<bool()>& until) {
    while (!until()) {
      site_->RunOnce();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  absl::Status Push(const std::string& id, uint64_t samples, float w) {
    auto task = site_->GetTask(id, absl::ZeroDuration());
    if (!task.ok()) return task.status();
    v1::UpdateHeader h;
    h.set_client_id(id);
    h.set_round(task->round());
    h.set_task_id(task->task_id());
    h.set_num_samples(samples);
    if (auto begun = site_->BeginUpdate(h); !begun.ok()) return begun.status();
    return site_->SubmitUpdate(h, Model(w)).status();
  }

  // Runs the parent's task `task_id` with `config` on a thread.
  std::thread TrainOn(const std::string& task_id, const v1::TrainConfig& config,
                      absl::StatusOr<client::TrainOutcome>& outcome) {
    return std::thread([this, task_id, config, &outcome] {
      outcome =
          trainer_.Train({3, task_id, nullptr, 5}, config, Model(1), stop_);
      trained_ = true;
    });
  }

  std::shared_ptr<SitePrivacy> privacy_ = std::make_shared<SitePrivacy>();
  std::optional<server::AsyncOptions> async_;  // the site's --mode=async
  std::atomic<bool> stop_{false};
  std::atomic<bool> trained_{false};
  std::unique_ptr<server::RoundCoordinator> site_;
  int sites_started_ = 0;
  GatewayTrainer trainer_;
  std::string a_, b_;
};

TEST_F(GatewayTrainerTest, JoinsForItsBoardsAndTrainsAsTheirRound) {
  StartWithTwoBoards();
  // What it declares to the parent: its boards and their samples.
  EXPECT_EQ(trainer_.boards(), 2u);
  EXPECT_EQ(trainer_.num_samples(), 40u);
  // Polled once, as real boards do, so the round may select them.
  ASSERT_TRUE(site_->GetTask(a_, absl::ZeroDuration()).ok());
  ASSERT_TRUE(site_->GetTask(b_, absl::ZeroDuration()).ok());

  std::atomic<bool> stop{false};
  absl::StatusOr<client::TrainOutcome> outcome;
  v1::TrainConfig config;
  config.set_model("lenet5");
  config.set_local_epochs(1);
  std::thread train([&] {
    outcome =
        trainer_.Train({3, "parent-task", nullptr, 5}, config, Model(1), stop);
  });
  Drive([&] {
    auto t = site_->GetTask(a_, absl::ZeroDuration());
    return t.ok() && t->action() == v1::GetTaskResponse::TRAIN;
  });
  EXPECT_EQ(site_->current_round(), 3u);  // the parent's round
  ASSERT_TRUE(Push(a_, 10, 2).ok());
  ASSERT_TRUE(Push(b_, 30, 6).ok());
  Drive([&] { return site_->history().size() == 1; });
  train.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->num_samples, 40u);
  ASSERT_EQ(outcome->model.size(), 1u);
  EXPECT_TRUE(outcome->model[0].tensor.equal(
      at::full({2, 2}, 5.0f)));           // (10*2 + 30*6) / 40
  EXPECT_TRUE(outcome->encoded.empty());  // the plan sends RAW

  // The agent asks the plan again when it rejoins: same plan, same site.
  EXPECT_TRUE(trainer_.UsePlan(Plan(), nullptr).ok());
  EXPECT_EQ(sites_started_, 1);
  v1::TrainingPlan other = Plan();
  other.set_learning_rate(0.5);
  EXPECT_EQ(trainer_.UsePlan(other, nullptr).code(),
            absl::StatusCode::kFailedPrecondition);
  trainer_.JobDone();
  EXPECT_TRUE(site_->done());
}

TEST_F(GatewayTrainerTest, StoppingEndsARoundItWaitsFor) {
  StartWithTwoBoards();
  std::atomic<bool> stop{false};
  absl::StatusOr<client::TrainOutcome> outcome;
  std::thread train([&] {
    outcome =
        trainer_.Train({1, "t", nullptr, 1}, v1::TrainConfig(), Model(1), stop);
  });
  trainer_.Stop();
  train.join();
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kCancelled);
}

// The root runs differential privacy: its config says the bound and q.
v1::TrainConfig DpConfig(double q) {
  v1::TrainConfig config;
  config.set_model("lenet5");
  config.set_local_epochs(1);
  config.set_dp_clip(1.0);
  config.set_dp_sampling_rate(q);
  return config;
}

TEST_F(GatewayTrainerTest, UnderARootWithDpForwardsTheClippedSumAndItsCount) {
  StartWithTwoBoards();
  ASSERT_TRUE(site_->GetTask(a_, absl::ZeroDuration()).ok());
  ASSERT_TRUE(site_->GetTask(b_, absl::ZeroDuration()).ok());
  absl::StatusOr<client::TrainOutcome> outcome;
  std::thread train = TrainOn("dp-task", DpConfig(1.0), outcome);
  Drive([&] {
    auto t = site_->GetTask(a_, absl::ZeroDuration());
    return t.ok() && t->action() == v1::GetTaskResponse::TRAIN;
  });
  // The boards are told the root's bound.
  auto task = site_->GetTask(b_, absl::ZeroDuration());
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->config().dp_clip(), 1.0);
  // From the parent's 1: a moves by norm 2, b by norm 10; both clipped to 1,
  // i.e. 0.5 a value each, summed unweighted: 1 + 0.5 + 0.5.
  ASSERT_TRUE(Push(a_, 10, 2).ok());
  ASSERT_TRUE(Push(b_, 30, 6).ok());
  Drive([&] { return site_->history().size() == 1; });
  train.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->model[0].tensor.equal(at::full({2, 2}, 2.0f)));
  ASSERT_TRUE(outcome->metrics.has_forwarded_sum());
  EXPECT_EQ(outcome->metrics.forwarded_sum().updates(), 2u);
  EXPECT_EQ(outcome->metrics.forwarded_sum().clipped(), 2u);
  EXPECT_EQ(outcome->num_samples, 40u);
  // The gateway's rounds carry no privacy figures: the root accounts.
  EXPECT_FALSE(site_->history().back().privacy.has_value());
}

TEST_F(GatewayTrainerTest, UnderARootWithDpAShortDrawForwardsAnEmptySumOnce) {
  StartWithTwoBoards();
  ASSERT_TRUE(site_->GetTask(a_, absl::ZeroDuration()).ok());
  ASSERT_TRUE(site_->GetTask(b_, absl::ZeroDuration()).ok());
  absl::StatusOr<client::TrainOutcome> outcome;
  // q this small draws no board: the offer ends, nothing is drawn again.
  std::thread train = TrainOn("empty-task", DpConfig(1e-12), outcome);
  Drive([&] { return trained_.load(); });
  train.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->model[0].tensor.equal(Model(1)[0].tensor));
  EXPECT_EQ(outcome->metrics.forwarded_sum().updates(), 0u);
  EXPECT_EQ(outcome->num_samples, 1u);
  EXPECT_TRUE(site_->history().empty());
  for (int i = 0; i < 20; ++i) site_->RunOnce();
  auto t = site_->GetTask(a_, absl::ZeroDuration());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->action(), v1::GetTaskResponse::WAIT);
}

// A clipped sum is bounded by the boards drawn for one root round; an
// asynchronous site's buffer is drawn for none.
TEST_F(GatewayTrainerTest, AnAsynchronousSiteRefusesARootWithDp) {
  async_ = server::AsyncOptions{};
  StartWithTwoBoards();
  const absl::StatusOr<client::TrainOutcome> outcome = trainer_.Train(
      {3, "dp-task", nullptr, 5}, DpConfig(1.0), Model(1), stop_);
  EXPECT_TRUE(absl::IsFailedPrecondition(outcome.status())) << outcome.status();
  EXPECT_NE(outcome.status().message().find("--mode=async"), std::string::npos);
  EXPECT_TRUE(site_->history().empty());
}

}  // namespace
}  // namespace fedberry::tiers::gateway_trainer_test
