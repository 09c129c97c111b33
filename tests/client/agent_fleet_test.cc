// The agent's side of the fleet contract against an in-process fake server:
// its release in Join, its condition with every GetTask, progress
// heartbeats while training, and a CLIENT_TOO_OLD refusal that it waits
// out (on its Clock) instead of asking again at once.
#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "base/testing/simulated_clock.h"
#include "base/version.h"
#include "client/client_agent.h"
#include "client/plan_trainer.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"
#include "runtime/training_plan.h"
#include "tests/client/small_training_job.h"

namespace fedberry::client::agent_fleet_test {
namespace {

using ::testing::HasSubstr;

constexpr char kTask[] = "task-1";

// Records what the agent sends; one TRAIN task, then DONE.
class FakeFederation : public v1::Federation::Service {
 public:
  // Every join is answered with `join_refusal` (OK: joined).
  explicit FakeFederation(absl::Status join_refusal)
      : join_refusal_(std::move(join_refusal)) {}

  grpc::Status GetPlan(grpc::ServerContext*, const v1::GetPlanRequest*,
                       v1::GetPlanResponse* response) override {
    v1::TrainConfig config;
    config.set_model("lenet5");
    *response->mutable_plan() = runtime::DefaultImagePlan(config);
    response->set_job_id("job");
    return grpc::Status::OK;
  }
  grpc::Status Join(grpc::ServerContext*, const v1::JoinRequest* request,
                    v1::JoinResponse* response) override {
    absl::MutexLock lock(&mu_);
    joins_.push_back(*request);
    if (!join_refusal_.ok()) return wire::ToGrpcStatus(join_refusal_);
    response->set_client_id("client-1");
    response->set_job_id("job");
    return grpc::Status::OK;
  }
  grpc::Status GetTask(grpc::ServerContext*, const v1::GetTaskRequest* request,
                       v1::GetTaskResponse* response) override {
    absl::MutexLock lock(&mu_);
    polls_.push_back(*request);
    if (polls_.size() == 1) {
      response->set_action(v1::GetTaskResponse::TRAIN);
      response->set_round(1);
      response->set_task_id(kTask);
      response->set_total_rounds(1);
    } else {
      response->set_action(v1::GetTaskResponse::DONE);
      response->set_round(2);
    }
    return grpc::Status::OK;
  }
  grpc::Status PullModel(grpc::ServerContext*,
                         const v1::PullModelRequest* request,
                         grpc::ServerWriter<v1::ModelChunk>* writer) override {
    runtime::NamedTensors model = {{"w", at::zeros({2})}};
    return wire::ToGrpcStatus(runtime::EncodeModel(
        model, request->round(), request->task_id(),
        [writer](const v1::ModelChunk& c) { return writer->Write(c); }));
  }
  grpc::Status Heartbeat(grpc::ServerContext*,
                         const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse*) override {
    absl::MutexLock lock(&mu_);
    heartbeats_.push_back(*request);
    return grpc::Status::OK;
  }

  std::vector<v1::JoinRequest> joins() {
    absl::MutexLock lock(&mu_);
    return joins_;
  }
  std::vector<v1::GetTaskRequest> polls() {
    absl::MutexLock lock(&mu_);
    return polls_;
  }
  std::vector<v1::HeartbeatRequest> heartbeats() {
    absl::MutexLock lock(&mu_);
    return heartbeats_;
  }

 private:
  const absl::Status join_refusal_;
  absl::Mutex mu_;
  std::vector<v1::JoinRequest> joins_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::GetTaskRequest> polls_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::HeartbeatRequest> heartbeats_ ABSL_GUARDED_BY(mu_);
};

// Reports ten steps of progress, moving the simulated clock between them,
// then fails the round (refused for what it is: not trained again).
class ScriptedTrainer : public LocalTrainer {
 public:
  explicit ScriptedTrainer(SimulatedClock& clock) : clock_(clock) {}
  uint64_t num_samples() const override { return 10; }
  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig&,
                                     const runtime::NamedTensors&,
                                     const std::atomic<bool>&) override {
    // Steps 1..10, 3 s apart: a heartbeat may go at most every 10 s.
    for (int64_t step = 1; step <= 10; ++step) {
      clock_.Advance(absl::Seconds(3));
      if (task.progress) task.progress(step, 10);
    }
    return absl::InvalidArgumentError("the scripted round ends here");
  }

 private:
  SimulatedClock& clock_;
};

absl::Status TooOld() {
  return wire::WithReason(
      absl::FailedPreconditionError("fedberry-client 0.0.1 is older than this "
                                    "job's --min_client_version 99.0"),
      wire::kReasonClientTooOld);
}

class AgentFleetTest : public ::testing::Test {
 protected:
  void Start(absl::Status join_refusal = absl::OkStatus()) {
    service_ = std::make_unique<FakeFederation>(std::move(join_refusal));
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    options_.name = "board-1";
    options_.backoff.max = absl::Milliseconds(10);
    options_.clock = &clock_;
  }
  std::unique_ptr<ClientAgent> MakeAgent(LocalTrainer& trainer) {
    return std::make_unique<ClientAgent>(
        options_, trainer,
        v1::Federation::NewStub(
            server_->InProcessChannel(grpc::ChannelArguments())));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  SimulatedClock clock_;
  AgentOptions options_;
  std::unique_ptr<FakeFederation> service_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AgentFleetTest, JoinSendsTheReleaseAndGetTaskTheCondition) {
  Start();
  int checks = 0;
  options_.condition = [&checks] {
    v1::BoardCondition c;
    c.set_soc_celsius(71.3);
    if (++checks == 1) c.set_declined("SoC at 71.3 C, over the 70 C limit");
    return c;
  };
  ScriptedTrainer trainer(clock_);
  auto agent = MakeAgent(trainer);
  ASSERT_TRUE(agent->Run().ok());

  ASSERT_EQ(service_->joins().size(), 1u);
  EXPECT_EQ(service_->joins()[0].client_version(), FedberryVersion());
  const std::vector<v1::GetTaskRequest> polls = service_->polls();
  ASSERT_EQ(polls.size(), 2u);
  EXPECT_EQ(polls[0].condition().declined(),
            "SoC at 71.3 C, over the 70 C limit");
  EXPECT_DOUBLE_EQ(polls[0].condition().soc_celsius(), 71.3);
  EXPECT_EQ(polls[1].condition().declined(), "");
  EXPECT_EQ(checks, 2);
}

TEST_F(AgentFleetTest, ProgressHeartbeatsAtMostEveryTenSeconds) {
  Start();
  ScriptedTrainer trainer(clock_);
  auto agent = MakeAgent(trainer);
  ASSERT_TRUE(agent->Run().ok());
  // Steps at 3, 6, ..., 30 s: sent at 12 s (step 4), 24 s (step 8).
  const std::vector<v1::HeartbeatRequest> beats = service_->heartbeats();
  ASSERT_EQ(beats.size(), 2u);
  for (const v1::HeartbeatRequest& b : beats) {
    EXPECT_EQ(b.state(), v1::HeartbeatRequest::TRAINING);
    EXPECT_EQ(b.client_id(), "client-1");
    EXPECT_EQ(b.task_id(), kTask);
    EXPECT_EQ(b.round(), 1u);
    EXPECT_EQ(b.steps_planned(), 10u);
  }
  EXPECT_EQ(beats[0].steps_done(), 4u);
  EXPECT_EQ(beats[1].steps_done(), 8u);
}

TEST_F(AgentFleetTest, ClientTooOldIsSaidAndNotAskedAgainAtOnce) {
  Start(TooOld());
  options_.unfit_wait = absl::Hours(1);
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  spdlog::default_logger()->sinks().push_back(sink);
  ScriptedTrainer trainer(clock_);
  auto agent = MakeAgent(trainer);
  absl::Status ran;
  std::thread run([&] { ran = agent->Run(); });
  // The error is logged just before the agent waits unfit_wait.
  std::string text;
  for (int i = 0; i < 3000 && !absl::StrContains(text, "upgrade"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    spdlog::default_logger()->flush();
    text = log.str();  // ostream_sink_mt writes under its own lock
  }
  agent->Stop();
  run.join();
  spdlog::default_logger()->sinks().pop_back();

  EXPECT_TRUE(absl::IsCancelled(ran)) << ran;
  EXPECT_EQ(service_->joins().size(), 1u);
  EXPECT_TRUE(service_->polls().empty());
  EXPECT_THAT(text, HasSubstr("upgrade fedberry-client on this board"));
  EXPECT_THAT(text, HasSubstr("--min_client_version 99.0"));
}

TEST_F(AgentFleetTest, ClientTooOldAsksAgainWhenItsClockSaysTheWaitIsOver) {
  Start(TooOld());
  options_.unfit_wait = absl::Hours(1);
  ScriptedTrainer trainer(clock_);
  auto agent = MakeAgent(trainer);
  absl::Status ran;
  std::thread run([&] { ran = agent->Run(); });
  auto joins_reach = [this](size_t n) {
    for (int i = 0; i < 3000 && service_->joins().size() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return service_->joins().size() >= n;
  };
  ASSERT_TRUE(joins_reach(1));
  // Real time passing does not end the wait; the agent's clock does.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  clock_.Advance(absl::Minutes(59));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(service_->joins().size(), 1u);
  clock_.Advance(absl::Minutes(1));
  EXPECT_TRUE(joins_reach(2));
  agent->Stop();
  run.join();
  EXPECT_TRUE(absl::IsCancelled(ran)) << ran;
}

// A board refused for declaring more samples than the fleet's bound
// allows says why and asks again later: it exited 1 before, and a real
// fedberry-client with 15,000 samples never joined a job whose first joins
// declared 100.
TEST_F(AgentFleetTest, SamplesAboveTheFleetAreSaidAndAskedAgainLater) {
  Start(wire::WithReason(
      absl::FailedPreconditionError(
          "not joined: declared 15000 samples, more than 10 x the median of "
          "100 samples a board of the boards taking part "
          "(--max_samples_ratio)"),
      wire::kReasonSamplesAboveFleet));
  options_.unfit_wait = absl::Hours(1);
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  spdlog::default_logger()->sinks().push_back(sink);
  ScriptedTrainer trainer(clock_);
  auto agent = MakeAgent(trainer);
  absl::Status ran;
  std::thread run([&] { ran = agent->Run(); });
  auto joins_reach = [this](size_t n) {
    for (int i = 0; i < 3000 && service_->joins().size() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return service_->joins().size() >= n;
  };
  ASSERT_TRUE(joins_reach(1));
  // Its wait is on its clock: an hour passes (again, should the agent start
  // waiting after the clock moved) until it asks again.
  for (int i = 0; i < 300 && service_->joins().size() < 2; ++i) {
    clock_.Advance(absl::Hours(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(service_->joins().size(), 2u) << "the agent gave up: " << ran;
  agent->Stop();
  run.join();
  spdlog::default_logger()->flush();
  spdlog::default_logger()->sinks().pop_back();
  EXPECT_TRUE(absl::IsCancelled(ran)) << ran;
  EXPECT_THAT(log.str(), HasSubstr("median of 100"));
  EXPECT_THAT(log.str(), HasSubstr("asking again in 1h"));
}

TEST(PlanTrainerProgress, ReportsEveryStepOfThePlan) {
  at::manual_seed(0);
  const std::string dir = ::testing::TempDir() + "/plan_trainer_progress";
  PlanTrainer trainer(small_job::Data(dir), /*seed_salt=*/0);
  const v1::TrainConfig config = small_job::Config();
  std::vector<std::pair<int64_t, int64_t>> seen;
  TaskRef task{1, "t"};
  task.progress = [&seen](int64_t done, int64_t planned) {
    seen.emplace_back(done, planned);
  };
  std::atomic<bool> stop{false};
  const runtime::NamedTensors global = small_job::Global();
  auto outcome = trainer.Train(task, config, global, stop);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(seen.size(), 24u);
  EXPECT_EQ(seen.front(), std::make_pair(int64_t{1}, int64_t{24}));
  EXPECT_EQ(seen.back(), std::make_pair(int64_t{24}, int64_t{24}));
}

}  // namespace
}  // namespace fedberry::client::agent_fleet_test
