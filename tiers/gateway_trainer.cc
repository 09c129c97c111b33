#include "tiers/gateway_trainer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "client/plan_trainer.h"
#include "runtime/training_plan.h"

namespace fedberry::tiers {

GatewayTrainer::GatewayTrainer(GatewayOptions options, SiteStarter start,
                               std::shared_ptr<SitePrivacy> privacy)
    : options_(options),
      start_(std::move(start)),
      privacy_(privacy ? std::move(privacy) : std::make_shared<SitePrivacy>()) {
}

void GatewayTrainer::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

server::RoundCoordinator* GatewayTrainer::site() const {
  absl::MutexLock lock(&mu_);
  return site_;
}

absl::Status GatewayTrainer::UsePlan(
    const v1::TrainingPlan& plan,
    const runtime::VerifiedModelFile* model_file) {
  if (plan_) {
    // The agent asks the plan again whenever it joins again.
    if (runtime::PlanFingerprint(plan) == runtime::PlanFingerprint(*plan_)) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(
        "the parent's plan changed (a new job); restart this gateway to serve "
        "it");
  }
  FEDBERRY_ASSIGN_OR_RETURN(
      server::RoundCoordinator * site,
      start_(plan, model_file, [this](server::UpstreamResult round) {
        Deliver(std::move(round));
      }));
  plan_ = plan;
  {
    absl::MutexLock lock(&mu_);
    site_ = site;
  }
  // The gateway declares its boards' samples when it joins the parent.
  absl::Time logged = absl::InfinitePast();
  while (site->registered_clients() < options_.min_boards) {
    if (options_.clock->Now() - logged > absl::Seconds(30)) {
      spdlog::info(
          "waiting for {} board(s) to join before joining the parent "
          "({} so far)",
          options_.min_boards, site->registered_clients());
      logged = options_.clock->Now();
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopped_), options_.poll)) {
      return absl::CancelledError("the gateway was stopped");
    }
  }
  return absl::OkStatus();
}

uint64_t GatewayTrainer::num_samples() const {
  server::RoundCoordinator* s = site();
  return s ? s->registered_samples() : 0;
}

uint32_t GatewayTrainer::boards() const {
  server::RoundCoordinator* s = site();
  return s ? static_cast<uint32_t>(s->registered_clients()) : 0;
}

void GatewayTrainer::Deliver(server::UpstreamResult round) {
  absl::MutexLock lock(&mu_);
  result_ = std::move(round);
}

absl::StatusOr<client::TrainOutcome> GatewayTrainer::Train(
    const client::TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  server::RoundCoordinator* s = site();
  if (s == nullptr || !plan_) {
    return absl::FailedPreconditionError(
        "this gateway serves no plan yet; it cannot run a round");
  }
  {
    absl::MutexLock lock(&mu_);
    result_.reset();
  }
  privacy_->Begin(task.task_id, config);
  const SiteRound dp = privacy_->round();
  if (dp.forwards() && s->options().async) {
    // A clipped sum's bound counts the boards drawn for one root round; a
    // buffer mixes rounds and is not drawn at all.
    return absl::FailedPreconditionError(
        "the parent runs differential privacy, which needs this gateway's "
        "rounds synchronous: restart it without --mode=async");
  }
  server::UpstreamRound round;
  round.draw_once = dp.forwards();
  round.round = task.round;
  round.task_id = task.task_id;
  round.total_rounds = task.total_rounds;
  round.train = config;
  round.global = std::make_shared<const runtime::NamedTensors>(global);
  FEDBERRY_RETURN_IF_ERROR(s->OfferRound(std::move(round)));
  spdlog::info(
      "round {}: running the parent's task {} with this gateway's "
      "boards",
      task.round, task.task_id);
  server::UpstreamResult result;
  {
    absl::MutexLock lock(&mu_);
    const auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopped_ || stop.load() ||
             (result_ && result_->upstream_task_id == task.task_id);
    };
    while (!ready())
      mu_.AwaitWithTimeout(absl::Condition(&ready), options_.poll);
    if (!(result_ && result_->upstream_task_id == task.task_id)) {
      return absl::CancelledError("the gateway was stopped mid-round");
    }
    result = *std::move(result_);
    result_.reset();
  }
  if (dp.forwards()) return ForwardSum(task, dp, global, std::move(result));
  FEDBERRY_RETURN_IF_ERROR(result.mean.status());
  client::TrainOutcome out;
  // The parent expects what its plan trains (--trainable), as a board does.
  const runtime::TrainableSet& trainable = s->trainable();
  out.model = trainable.Select(*result.mean);
  out.num_samples = result.weight;
  out.metrics = result.metrics;
  runtime::NamedTensors residual_next;
  FEDBERRY_ASSIGN_OR_RETURN(
      out.encoded,
      client::EncodeUpdate(*plan_, out.model, trainable.Select(global),
                           residual_, &residual_next));
  residual_ = std::move(residual_next);
  spdlog::info("round {}: {} board(s) of this gateway weigh {} samples",
               task.round, result.participants, result.weight);
  return out;
}

absl::StatusOr<client::TrainOutcome> GatewayTrainer::ForwardSum(
    const client::TaskRef& task, const SiteRound& dp,
    const runtime::NamedTensors& global, server::UpstreamResult result) {
  const std::optional<SiteSum> sum =
      result.mean.ok() ? privacy_->summed(task.task_id) : std::nullopt;
  client::TrainOutcome out;
  // No board drawn, or none reported: an empty sum, so the root's round
  // need not wait for this gateway, and this gateway draws no second time
  // for it (a second draw would raise each board's chance above q).
  const runtime::TrainableSet& trainable = site()->trainable();
  out.model = trainable.Select(sum ? *result.mean : global);
  if (sum) out.metrics = result.metrics;
  v1::ForwardedSum* forwarded = out.metrics.mutable_forwarded_sum();
  forwarded->set_updates(sum ? static_cast<uint32_t>(sum->updates) : 0);
  forwarded->set_clipped(sum ? static_cast<uint32_t>(sum->clipped) : 0);
  // The wire refuses a weightless update; under DP the root weighs none.
  out.num_samples = std::max<uint64_t>(1, sum ? result.weight : 0);
  // No top-k leftovers: they would carry one round's boards into the next
  // round's sum, beyond its bound.
  residual_.clear();
  runtime::NamedTensors unused;
  FEDBERRY_ASSIGN_OR_RETURN(
      out.encoded, client::EncodeUpdate(*plan_, out.model,
                                        trainable.Select(global), {}, &unused));
  spdlog::info(
      "round {}: forwarding the clipped sum of {} board update(s) of this "
      "gateway ({} reached the bound {:g}; boards drawn with q={:g}{}); no "
      "noise added here: the root adds it{}",
      task.round, forwarded->updates(), forwarded->clipped(), dp.clip,
      dp.sampling_rate, dp.local ? ", noised on the boards" : "",
      sum ? ""
          : absl::StrCat(
                " (empty: ",
                result.mean.ok() ? "no sum" : result.mean.status().message(),
                ")"));
  return out;
}

void GatewayTrainer::JobDone() {
  if (server::RoundCoordinator* s = site()) s->Shutdown();
}

}  // namespace fedberry::tiers
