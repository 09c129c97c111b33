#include "server/round/held_evaluation.h"

#include <spdlog/spdlog.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"

namespace fedberry::server {

const std::set<std::string>& HeldEvaluation::Open(
    Held held, std::shared_ptr<const runtime::NamedTensors> model,
    std::set<std::string> asked, absl::Time now) {
  const uint64_t round = held.report.round;
  std::mt19937_64 rng(seed_ * 1000003u + round * 7919u + 0xe7a1u);
  std::string task_id = absl::StrFormat(
      "e%d-%08x", round, static_cast<uint32_t>(rng() & 0xffffffff));
  spdlog::info(
      "round {}: asking {} board(s) to evaluate its model on their held-out "
      "samples (task {})",
      round, asked.size(), task_id);
  evaluation_.emplace(round, std::move(task_id), std::move(model),
                      std::move(asked), now);
  held_ = std::move(held);
  return evaluation_->asked();
}

bool HeldEvaluation::Task(const std::string& id, const v1::TrainConfig& train,
                          v1::GetTaskResponse& response) const {
  if (!Awaits(id)) return false;
  response.set_action(v1::GetTaskResponse::EVALUATE);
  response.set_round(evaluation_->round());
  response.set_task_id(evaluation_->task_id());
  *response.mutable_config() = train;
  return true;
}

std::optional<absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>>
HeldEvaluation::ModelFor(const v1::PullModelRequest& request) const {
  if (!evaluation_ || request.task_id() != evaluation_->task_id() ||
      request.round() != evaluation_->round()) {
    return std::nullopt;
  }
  if (!evaluation_->Awaits(request.client_id())) {
    return absl::FailedPreconditionError(
        absl::StrCat("client ", request.client_id(),
                     " is not asked to evaluate round ", request.round()));
  }
  return evaluation_->model();
}

absl::Status HeldEvaluation::Accept(const v1::EvaluationReport& report,
                                    const ClientRecord& client,
                                    uint64_t declared_samples) {
  if (!evaluation_) {
    return absl::FailedPreconditionError(
        absl::StrCat("board ", client.name, " was not asked to evaluate round ",
                     report.round(), " (no evaluation is open)"));
  }
  absl::Status accepted = evaluation_->Accept(
      report.client_id(), client.name, declared_samples, report, options_);
  if (accepted.ok() && !report.declined().empty()) {
    spdlog::info("round {}: board {} declined to evaluate: {}",
                 evaluation_->round(), client.name,
                 base::Printable(report.declined()));
  }
  return accepted;
}

bool HeldEvaluation::Over(absl::Time now, bool stopping) const {
  return evaluation_->Complete() || stopping ||
         evaluation_->PastDeadline(now, options_.deadline);
}

std::optional<HeldEvaluation::Held> HeldEvaluation::Finish(absl::Time now) {
  if (!held_) return std::nullopt;
  Held held = *std::move(held_);
  held_.reset();
  BoardEvalSummary summary = evaluation_->Summarize(now, options_.regression);
  evaluation_.reset();
  spdlog::info("round {}: {}", held.report.round,
               DescribeBoardEvaluation(summary));
  held.report.board_eval = std::move(summary);
  return held;
}

}  // namespace fedberry::server
