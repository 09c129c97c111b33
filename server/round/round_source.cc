#include "server/round/round_source.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/strategy/update_layout.h"

namespace fedberry::server {

std::optional<RoundSource::Opening> OwnRounds::Next(
    uint64_t round,
    const std::shared_ptr<const runtime::NamedTensors>& global) {
  Opening opening;
  opening.round = round;
  opening.global = global;
  opening.train = train_;
  // Each round gets its own data order.
  opening.train.set_seed(seed_ * 7919 + round);
  opening.total_rounds = total_rounds();
  return opening;
}

uint32_t OwnRounds::total_rounds() const {
  return static_cast<uint32_t>(std::max(0, rounds_));
}

bool OwnRounds::EndsBefore(uint64_t next_round) const {
  return next_round > static_cast<uint64_t>(std::max(0, rounds_));
}

bool OwnRounds::MayOverlap(uint64_t round) const {
  return round < static_cast<uint64_t>(std::max(0, rounds_));
}

absl::Status UpstreamRounds::Offer(UpstreamRound round,
                                   const runtime::NamedTensors& model) {
  if (!round.global) {
    return absl::InvalidArgumentError("the parent's round has no model");
  }
  if (absl::Status s = CheckUpdateLayout(model, *round.global); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the parent's model does not fit this gateway's plan: ", s.message()));
  }
  absl::MutexLock lock(&mu_);
  offer_ = std::move(round);
  return absl::OkStatus();
}

std::optional<RoundSource::Opening> UpstreamRounds::Next(
    uint64_t, const std::shared_ptr<const runtime::NamedTensors>&) {
  absl::MutexLock lock(&mu_);
  if (!offer_) return std::nullopt;
  // A gateway runs the parent's rounds, with the parent's model.
  total_rounds_ = offer_->total_rounds;
  return Opening{offer_->round, offer_->global, offer_->train,
                 offer_->total_rounds};
}

uint32_t UpstreamRounds::total_rounds() const {
  absl::MutexLock lock(&mu_);
  return total_rounds_;
}

void UpstreamRounds::Closed(
    const RoundReport& report,
    const std::shared_ptr<const runtime::NamedTensors>& model) {
  UpstreamResult out;
  {
    absl::MutexLock lock(&mu_);
    if (!offer_) return;
    out.upstream_task_id = offer_->task_id;
    offer_.reset();  // run once; the parent's next task brings the next
  }
  double loss = 0, accuracy = 0;
  uint64_t steps = 0;
  for (const ClientRoundReport& c : report.clients) {
    const double w = static_cast<double>(c.num_samples);
    out.weight += c.num_samples;
    loss += w * c.metrics.train_loss();
    accuracy += w * c.metrics.train_accuracy();
    steps += c.metrics.steps();
  }
  out.participants = report.participants;
  // Securely aggregated: no board pushed; the session's unmasked weights.
  if (report.secagg && report.participants > 0) {
    out.weight = static_cast<uint64_t>(std::llround(report.secagg->weight));
  }
  if (out.weight > 0) {
    out.metrics.set_train_loss(loss / static_cast<double>(out.weight));
    out.metrics.set_train_accuracy(accuracy / static_cast<double>(out.weight));
  }
  // The parent's planner reads the rest of its round as transfer time.
  out.metrics.set_train_seconds(report.round_seconds);
  out.metrics.set_steps(steps);
  if (model && out.weight > 0) {
    out.mean = *model;
  } else {
    out.mean = absl::InternalError(
        absl::StrCat("round ", report.round, " of this gateway gave no model: ",
                     report.refused_result.empty() ? "no accepted update"
                                                   : report.refused_result));
  }
  if (sink_) sink_(std::move(out));
}

void UpstreamRounds::Abandoned(const RoundReport& report) {
  UpstreamResult out;
  {
    absl::MutexLock lock(&mu_);
    if (!offer_ || !offer_->draw_once) return;  // drawn again later
    out.upstream_task_id = offer_->task_id;
    offer_.reset();
  }
  out.mean = absl::FailedPreconditionError(absl::StrCat(
      "round ", report.round, " of this gateway drew ", report.selected,
      " board(s) and ended with ", report.participants, " update(s), too few"));
  if (sink_) sink_(std::move(out));
}

}  // namespace fedberry::server
