#include "client/agent_reports.h"

#include <spdlog/spdlog.h>

#include "client/agent_rpc.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"

namespace fedberry::client {
namespace {

// Streams the update of `outcome`: its encoded tensors when the plan asked
// for an encoding, else the model RAW.
absl::Status StreamUpdate(
    const TrainOutcome& outcome, uint64_t round, const std::string& task_id,
    const std::function<bool(const v1::ModelChunk&)>& sink) {
  if (!outcome.encoded.empty()) {
    return runtime::EncodeTensors(outcome.encoded, round, task_id, sink);
  }
  return runtime::EncodeModel(outcome.model, round, task_id, sink);
}

}  // namespace

uint64_t EncodedUpdateBytes(const TrainOutcome& outcome, uint64_t round,
                            const std::string& task_id) {
  uint64_t bytes = 0;
  (void)StreamUpdate(outcome, round, task_id, [&](const v1::ModelChunk& chunk) {
    bytes += chunk.ByteSizeLong();
    return true;
  });
  return bytes;
}

void AgentReports::BeginTask(const std::string& client_id, uint64_t round,
                             const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  current_.set_client_id(client_id);
  current_.set_round(round);
  current_.set_task_id(task_id);
  progress_sent_ = calls_.clock->Now();
}

void AgentReports::EndTask() {
  absl::MutexLock lock(&mu_);
  current_.Clear();
}

void AgentReports::Heartbeat(v1::HeartbeatRequest::State state,
                             absl::Duration paused_for) {
  v1::HeartbeatRequest request;
  {
    absl::MutexLock lock(&mu_);
    if (current_.task_id().empty()) return;
    request = current_;
  }
  request.set_state(state);
  request.set_paused_seconds(absl::ToDoubleSeconds(paused_for));
  Send(request, absl::Seconds(10));
}

void AgentReports::Send(const v1::HeartbeatRequest& request,
                        absl::Duration deadline) {
  grpc::ClientContext context;
  wire::SetDeadline(context, deadline);
  v1::HeartbeatResponse response;
  absl::Status s = wire::FromGrpcStatus(
      calls_.stub->Heartbeat(&context, request, &response));
  if (!s.ok()) spdlog::warn("heartbeat not delivered: {}", s.ToString());
}

void AgentReports::Progress(int64_t steps_done, int64_t steps_planned) {
  const absl::Time now = calls_.clock->Now();
  v1::HeartbeatRequest request;
  {
    absl::MutexLock lock(&mu_);
    current_.set_steps_done(static_cast<uint64_t>(steps_done));
    current_.set_steps_planned(static_cast<uint64_t>(steps_planned));
    if (current_.task_id().empty() || now - progress_sent_ < kProgressEvery) {
      return;
    }
    progress_sent_ = now;
    request = current_;
  }
  request.set_state(v1::HeartbeatRequest::TRAINING);
  // On the training thread: a short deadline, so a server that does not
  // answer costs training little (a failure is only logged).
  Send(request, absl::Seconds(2));
}

absl::Status AgentReports::PushUpdate(const std::string& client_id,
                                      const v1::GetTaskResponse& task,
                                      const TrainOutcome& outcome,
                                      const v1::ResourceMetrics& resources,
                                      const std::vector<std::string>& kept) {
  grpc::ClientContext context;
  wire::SetDeadline(context, calls_.rpc_timeout);
  wire::AddClientId(context, client_id);
  calls_.track(&context);
  v1::PushUpdateResponse response;
  auto writer = calls_.stub->PushUpdate(&context, &response);
  v1::UpdateChunk message;
  v1::UpdateHeader* header = message.mutable_header();
  header->set_client_id(client_id);
  header->set_round(task.round());
  header->set_task_id(task.task_id());
  header->set_num_samples(outcome.num_samples);
  *header->mutable_metrics() = outcome.metrics;
  *header->mutable_resources() = resources;
  for (const std::string& move : kept) header->add_kept_moves(move);
  bool open = writer->Write(message);
  // The server answers the header first: the go-ahead when it is this
  // push's turn (it may wait for one among --max_inflight_updates), or a
  // refusal (busy, late, refused) before the update's bytes are sent.
  if (auto* real =
          dynamic_cast<grpc::ClientWriter<v1::UpdateChunk>*>(writer.get());
      open && real != nullptr) {
    real->WaitForInitialMetadata();
    open = wire::HasPushTurn(context.GetServerInitialMetadata());
  }
  if (open) {
    absl::Status encoded = StreamUpdate(outcome, task.round(), task.task_id(),
                                        [&](const v1::ModelChunk& chunk) {
                                          *message.mutable_chunk() = chunk;
                                          return writer->Write(message);
                                        });
    (void)encoded;  // a broken stream shows in Finish()'s status
    writer->WritesDone();
  }
  absl::Status s = wire::FromGrpcStatus(writer->Finish());
  calls_.track(nullptr);
  return s;
}

absl::Status AgentReports::ReportEvaluation(
    const v1::EvaluationReport& report) {
  while (true) {
    v1::ReportEvaluationResponse response;
    grpc::ClientContext context;
    wire::SetDeadline(context, calls_.rpc_timeout);
    calls_.track(&context);
    absl::Status s = wire::FromGrpcStatus(
        calls_.stub->ReportEvaluation(&context, report, &response));
    calls_.track(nullptr);
    if (s.ok() || absl::IsAlreadyExists(s)) return absl::OkStatus();
    if (!IsTransient(s) || calls_.stopped()) return s;
    if (!calls_.back_off(s, "reporting the evaluation")) return s;
  }
}

}  // namespace fedberry::client
