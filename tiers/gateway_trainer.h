// A site gateway's side of tiers (fedberry-server --upstream=PARENT). To its
// parent the gateway is one board: a client::ClientAgent joins, polls, pulls
// the parent's model and pushes an update. Its "training" is a round of its
// own boards, run by the gateway's RoundCoordinator in upstream mode; the
// update is their weighted mean, weighing what they weighed together, so
// FedAvg over the tiers is FedAvg over every board. Under a root that runs
// differential privacy the update is instead the sum of the boards' clipped
// updates with their count (TrainMetrics.forwarded_sum), drawn and summed
// as SitePrivacy says, with no noise: the root adds it.
// Thread-safety: Train, UsePlan and JobDone on the agent's thread; Deliver
// from the coordinator's driver; Stop from any thread.
#ifndef FEDBERRY_TIERS_GATEWAY_TRAINER_H_
#define FEDBERRY_TIERS_GATEWAY_TRAINER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/local_trainer.h"
#include "server/round_coordinator.h"
#include "tiers/site_privacy.h"

namespace fedberry::tiers {

struct GatewayOptions {
  // Boards that must have joined this gateway before it joins its parent
  // (it declares their samples).
  int min_boards = 1;
  absl::Duration poll = absl::Milliseconds(200);
  // Paces the "waiting for boards" log. Must outlive the trainer.
  Clock* clock = &Clock::Real();
};

class GatewayTrainer final : public client::LocalTrainer {
 public:
  // Starts the gateway's own server for the parent's plan, with `sink` as
  // its coordinator's upstream sink, and returns that coordinator (which must
  // outlive this trainer's use of it).
  using SiteStarter = std::function<absl::StatusOr<server::RoundCoordinator*>(
      const v1::TrainingPlan& plan, const runtime::VerifiedModelFile* file,
      server::UpstreamSink sink)>;

  // `privacy` (may be null: one of its own) is what the site's cohorts and
  // sums read (ForwardClippedSums), set here for each parent task.
  GatewayTrainer(GatewayOptions options, SiteStarter start,
                 std::shared_ptr<SitePrivacy> privacy = nullptr);

  // Ends a wait in UsePlan or Train soon.
  void Stop();
  // The coordinator, once the site serves (null before).
  server::RoundCoordinator* site() const;

  // Starts the site for the parent's plan (once; the same plan again is
  // fine, another one is refused) and returns once min_boards have joined.
  absl::Status UsePlan(const v1::TrainingPlan& plan,
                       const runtime::VerifiedModelFile* model_file) override;
  uint64_t num_samples() const override;
  uint32_t boards() const override;
  // Runs the parent's task as a round of this gateway's boards and returns
  // their weighted mean (encoded as the plan asks), or under a root with
  // differential privacy their clipped sum and its counts (an empty sum
  // when no board was drawn or reported). Cancelled when stopped.
  absl::StatusOr<client::TrainOutcome> Train(
      const client::TaskRef& task, const v1::TrainConfig& config,
      const runtime::NamedTensors& global,
      const std::atomic<bool>& stop) override;
  // The parent's job is done: so is this gateway's (its boards hear DONE).
  void JobDone() override;

 private:
  void Deliver(server::UpstreamResult round);
  // The outcome of a round under a root with differential privacy.
  absl::StatusOr<client::TrainOutcome> ForwardSum(
      const client::TaskRef& task, const SiteRound& dp,
      const runtime::NamedTensors& global, server::UpstreamResult result);

  const GatewayOptions options_;
  const SiteStarter start_;
  const std::shared_ptr<SitePrivacy> privacy_;
  std::optional<v1::TrainingPlan> plan_;  // the agent's thread only
  // Top-k leftovers: what the last update left out (the agent's thread).
  runtime::NamedTensors residual_;
  mutable absl::Mutex mu_;
  server::RoundCoordinator* site_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::optional<server::UpstreamResult> result_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fedberry::tiers

#endif  // FEDBERRY_TIERS_GATEWAY_TRAINER_H_
