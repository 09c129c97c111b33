#include "client/agent_data_moves.h"

#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "base/status_macros.h"
#include "client/agent_rpc.h"
#include "client/data_loan.h"
#include "proto/wire.h"
#include "runtime/sample_codec.h"

namespace fedberry::client {

absl::Status AgentDataMoves::Push(const std::string& client_id,
                                  const v1::GetTaskResponse& task,
                                  const v1::DataMove& move,
                                  const runtime::ImageDataset& samples,
                                  uint64_t* bytes) {
  grpc::ClientContext context;
  wire::SetDeadline(context, calls_.rpc_timeout);
  calls_.track(&context);
  v1::PushSamplesResponse response;
  auto writer = calls_.stub->PushSamples(&context, &response);
  (void)runtime::EncodeSamples(
      samples, {client_id, task.round(), task.task_id(), move.move_id()},
      [&](const v1::SampleChunk& chunk) {
        *bytes += chunk.ByteSizeLong();
        return writer->Write(chunk);
      });  // a broken stream shows in Finish()'s status
  writer->WritesDone();
  absl::Status s = wire::FromGrpcStatus(writer->Finish());
  calls_.track(nullptr);
  return s;
}

absl::StatusOr<runtime::ImageDataset> AgentDataMoves::Pull(
    const std::string& client_id, const v1::GetTaskResponse& task,
    const v1::DataMove& move, uint64_t* bytes) {
  v1::PullSamplesRequest request;
  request.set_client_id(client_id);
  request.set_round(task.round());
  request.set_task_id(task.task_id());
  request.set_move_id(move.move_id());
  grpc::ClientContext context;
  wire::SetDeadline(context, calls_.rpc_timeout);
  calls_.track(&context);
  auto reader = calls_.stub->PullSamples(&context, request);
  runtime::SampleAssembler assembler(
      {client_id, task.round(), task.task_id(), move.move_id()},
      move.samples());
  absl::Status s =
      ReadStream(context, *reader, [&](const v1::SampleChunk& chunk) {
        *bytes += chunk.ByteSizeLong();
        return assembler.Add(chunk);
      });
  calls_.track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  return assembler.Finish();
}

void AgentDataMoves::HandOver(const std::string& client_id,
                              const v1::GetTaskResponse& task, RoundData* data,
                              v1::ResourceMetrics* moved) {
  const absl::Time start = calls_.clock->Now();
  uint64_t sent = 0, total = 0;
  for (const v1::DataMove& m : task.send()) total += m.samples();
  absl::StatusOr<runtime::ImageDataset> lend = calls_.trainer->SamplesToLend(
      TaskRef{task.round(), task.task_id()}, task.config(), total);
  if (!lend.ok()) {
    spdlog::error("round {}: cannot hand over {} samples: {}", task.round(),
                  total, lend.status().ToString());
  }
  // Moves go in order, each the next slice of the lending order; the first
  // that fails ends them, so what was lent is always a prefix, and the rest
  // are kept (the update tells the server, so their receivers stop waiting).
  for (int i = 0; i < task.send_size(); ++i) {
    const v1::DataMove& m = task.send(i);
    if (!lend.ok() || !data->kept.empty()) {
      data->kept.push_back(m.move_id());
      continue;
    }
    std::vector<int64_t> slice(m.samples());
    for (uint64_t k = 0; k < m.samples(); ++k) {
      slice[k] = static_cast<int64_t>(data->lent + k);
    }
    absl::Status pushed =
        Push(client_id, task, m, SelectRows(*lend, slice), &sent);
    if (!pushed.ok() && !absl::IsAlreadyExists(pushed)) {
      spdlog::warn(
          "round {}: data move {}: handing {} samples to {} failed, this "
          "board trains them itself: {}",
          task.round(), m.move_id(), m.samples(), m.peer(), pushed.ToString());
      data->kept.push_back(m.move_id());
      continue;
    }
    data->lent += m.samples();
    spdlog::info("round {}: data move {}: handed {} samples over to {}",
                 task.round(), m.move_id(), m.samples(), m.peer());
  }
  moved->set_data_move_seconds(
      moved->data_move_seconds() +
      absl::ToDoubleSeconds(calls_.clock->Now() - start));
  moved->set_data_move_sent_bytes(sent);
}

void AgentDataMoves::Fetch(const std::string& client_id,
                           const v1::GetTaskResponse& task, RoundData* data,
                           v1::ResourceMetrics* moved) {
  const absl::Time start = calls_.clock->Now();
  uint64_t received = 0;
  for (const v1::DataMove& m : task.receive()) {
    absl::StatusOr<runtime::ImageDataset> samples =
        Pull(client_id, task, m, &received);
    // Through a server failure, ask again while the wait allows: a
    // restarted server gets the samples again from their sender.
    while (!samples.ok() && IsTransient(samples.status()) &&
           !calls_.stopped() &&
           calls_.clock->Now() - start < calls_.data_move_wait) {
      spdlog::warn("round {}: data move {}: fetching failed ({}), asking again",
                   task.round(), m.move_id(), samples.status().ToString());
      if (!calls_.sleep(absl::Milliseconds(500))) break;
      samples = Pull(client_id, task, m, &received);
    }
    if (!samples.ok()) {
      spdlog::warn(
          "round {}: data move {}: the {} samples from {} did not arrive, "
          "training without them: {}",
          task.round(), m.move_id(), m.samples(), m.peer(),
          samples.status().ToString());
      continue;
    }
    spdlog::info("round {}: data move {}: received {} samples from {}",
                 task.round(), m.move_id(), samples->rows, m.peer());
    data->borrowed.push_back(*std::move(samples));
  }
  moved->set_data_move_seconds(
      moved->data_move_seconds() +
      absl::ToDoubleSeconds(calls_.clock->Now() - start));
  moved->set_data_move_received_bytes(received);
}

void AgentDataMoves::HandOverLentAgain(const std::string& client_id,
                                       const v1::GetTaskResponse& task,
                                       const RoundData& data) {
  v1::GetTaskResponse lent = task;
  lent.clear_send();
  for (const v1::DataMove& m : task.send()) {
    if (!absl::c_linear_search(data.kept, m.move_id())) *lent.add_send() = m;
  }
  RoundData again;
  v1::ResourceMetrics ignored;
  HandOver(client_id, lent, &again, &ignored);
}

}  // namespace fedberry::client
