#include "server/round/board_tasks.h"

#include <optional>
#include <utility>

#include "base/status_macros.h"
#include "server/round/board_messages.h"

namespace fedberry::server {

absl::StatusOr<v1::GetTaskResponse> BoardTasks::Answer(const std::string& id) {
  JobState& job = parts_.job;
  FEDBERRY_ASSIGN_OR_RETURN(ClientRecord * found, job.clients().Lookup(id));
  ClientRecord& client = *found;
  client.last_seen = parts_.job.clock().Now();
  client.polled = true;
  client.heard = true;
  v1::GetTaskResponse response;
  response.set_total_rounds(job.total_rounds());
  response.set_round(job.round());
  if (job.phase() == RoundPhase::kDone) {
    client.told_done = true;
    response.set_action(v1::GetTaskResponse::DONE);
    return response;
  }
  if (std::optional<TrainTask> task = parts_.kind.TaskFor(id, client)) {
    response.set_action(v1::GetTaskResponse::TRAIN);
    response.set_round(task->round);
    response.set_task_id(task->task_id);
    *response.mutable_config() = ConfigFor(id);
    if (task->seed) response.mutable_config()->set_seed(*task->seed);
    if (task->secagg) *response.mutable_secagg() = *std::move(task->secagg);
    parts_.relay.AddMovesTo(client.name, response);
    return response;
  }
  if (job.phase() == RoundPhase::kEvaluating &&
      parts_.closing.evaluation().Task(id, job.train(), response)) {
    return response;
  }
  response.set_action(v1::GetTaskResponse::WAIT);
  response.set_retry_after_ms(200);
  return response;
}

v1::TrainConfig BoardTasks::ConfigFor(const std::string& id) const {
  v1::TrainConfig config = parts_.job.train();
  if (std::optional<int64_t> steps = parts_.kind.PartOf(id).planned_steps) {
    config.set_local_steps(static_cast<uint32_t>(*steps));
  }
  return config;
}

absl::Status BoardTasks::Check(const std::string& id, uint64_t round,
                               const std::string& task_id, TaskUse use) {
  FEDBERRY_RETURN_IF_ERROR(parts_.job.clients().Lookup(id).status());
  return parts_.kind.CheckTask(id, round, task_id, use);
}

absl::StatusOr<ClientRecord*> BoardTasks::CheckedAndSeen(
    const std::string& id, uint64_t round, const std::string& task_id) {
  FEDBERRY_RETURN_IF_ERROR(Check(id, round, task_id));
  ClientRecord& client = parts_.job.clients().At(id);
  client.last_seen = parts_.job.clock().Now();
  client.task_heard = client.last_seen;
  return &client;
}

absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
BoardTasks::ModelFor(const v1::PullModelRequest& request) {
  if (auto model = parts_.closing.evaluation().ModelFor(request)) {
    FEDBERRY_ASSIGN_OR_RETURN(ClientRecord * client,
                              parts_.job.clients().Lookup(request.client_id()));
    if (model->ok()) client->last_seen = parts_.job.clock().Now();
    return *std::move(model);
  }
  FEDBERRY_RETURN_IF_ERROR(
      CheckedAndSeen(request.client_id(), request.round(), request.task_id())
          .status());
  FEDBERRY_ASSIGN_OR_RETURN(TaskBase base,
                            parts_.kind.BaseOf(request.client_id()));
  return base.model;
}

absl::StatusOr<std::string> BoardTasks::NameForTask(
    const std::string& id, uint64_t round, const std::string& task_id) {
  FEDBERRY_ASSIGN_OR_RETURN(const ClientRecord* client,
                            CheckedAndSeen(id, round, task_id));
  return client->name;
}

absl::Status BoardTasks::Heartbeat(const v1::HeartbeatRequest& request) {
  JobState& job = parts_.job;
  FEDBERRY_ASSIGN_OR_RETURN(
      ClientRecord * client,
      CheckedAndSeen(request.client_id(), request.round(), request.task_id()));
  NoteHeartbeat(*client, request, job.round());
  job.WorkChanged();
  return absl::OkStatus();
}

absl::Status BoardTasks::AcceptEvaluation(const v1::EvaluationReport& report,
                                          const DeclaredSizeBound& bound) {
  JobState& job = parts_.job;
  FEDBERRY_ASSIGN_OR_RETURN(ClientRecord * client,
                            job.clients().Lookup(report.client_id()));
  client->last_seen = parts_.job.clock().Now();
  HeldEvaluation& evaluation = parts_.closing.evaluation();
  // Held out from what it trains on: the declaration training weighs.
  FEDBERRY_RETURN_IF_ERROR(evaluation.Accept(
      report, *client, bound.Cap(client->num_samples, client->boards)));
  if (evaluation.Complete()) job.WorkChanged();
  return absl::OkStatus();
}

void BoardTasks::NoteCondition(const std::string& id,
                               const v1::BoardCondition& untrusted) {
  ClientRecord* client = parts_.job.clients().Find(id);
  if (client == nullptr) return;  // Answer says NotFound
  const bool declines = server::NoteCondition(*client, untrusted);
  if (declines && parts_.kind.Release(id, nullptr)) parts_.job.WorkChanged();
}

std::vector<BoardRow> BoardTasks::Rows(absl::Duration liveness) const {
  const JobState& job = parts_.job;
  const absl::Time now = parts_.job.clock().Now();
  std::vector<BoardRow> rows;
  for (const auto& [id, c] : job.clients().all()) {
    rows.push_back(RowOf(c, parts_.kind.PartOf(id),
                         c.heard && c.SeenWithin(now, liveness),
                         job.phase() == RoundPhase::kEvaluating &&
                             parts_.closing.evaluation().Awaits(id)));
  }
  return rows;
}

}  // namespace fedberry::server
