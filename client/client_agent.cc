#include "client/client_agent.h"

#include <spdlog/spdlog.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "client/agent_rpc.h"
#include "client/identity_refusal.h"
#include "client/memory_release.h"
#include "client/model_file_cache.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"
#include "runtime/training_plan.h"

namespace fedberry::client {
namespace {

// The work itself was refused (an update beyond the bounds, a model that
// does not fit): doing the same task again would be refused again.
bool RefusedForWhatItIs(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsPermissionDenied(s) ||
         absl::IsUnauthenticated(s) || absl::IsOutOfRange(s);
}

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

// Serialized size of the chunks StreamUpdate will send.
uint64_t EncodedBytes(const TrainOutcome& outcome, uint64_t round,
                      const std::string& task_id) {
  uint64_t bytes = 0;
  (void)StreamUpdate(outcome, round, task_id, [&](const v1::ModelChunk& chunk) {
    bytes += chunk.ByteSizeLong();
    return true;
  });
  return bytes;
}

}  // namespace

ClientAgent::ClientAgent(AgentOptions options, LocalTrainer& trainer,
                         std::unique_ptr<v1::Federation::StubInterface> stub)
    : options_(std::move(options)),
      trainer_(trainer),
      stub_(std::move(stub)),
      backoff_(options_.backoff, options_.seed),
      moves_({stub_.get(), &trainer_, options_.clock, options_.rpc_timeout,
              options_.data_move_wait,
              [this](grpc::ClientContext* context) { Track(context); },
              [this](absl::Duration d) { return Sleep(d); },
              [this] { return stop_.load(); }}) {
  if (options_.watchdog_totals) meter_.SetWatchdog(options_.watchdog_totals);
}

void ClientAgent::Heartbeat(v1::HeartbeatRequest::State state,
                            absl::Duration paused_for) {
  v1::HeartbeatRequest request;
  {
    absl::MutexLock lock(&mu_);
    if (current_.task_id().empty()) return;
    request = current_;
  }
  request.set_state(state);
  request.set_paused_seconds(absl::ToDoubleSeconds(paused_for));
  SendHeartbeat(request, absl::Seconds(10));
}

void ClientAgent::SendHeartbeat(const v1::HeartbeatRequest& request,
                                absl::Duration deadline) {
  grpc::ClientContext context;
  wire::SetDeadline(context, deadline);
  v1::HeartbeatResponse response;
  absl::Status s =
      wire::FromGrpcStatus(stub_->Heartbeat(&context, request, &response));
  if (!s.ok()) spdlog::warn("heartbeat not delivered: {}", s.ToString());
}

void ClientAgent::ReportProgress(int64_t steps_done, int64_t steps_planned) {
  const absl::Time now = options_.clock->Now();
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
  SendHeartbeat(request, absl::Seconds(2));
}

void ClientAgent::Track(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  in_flight_ = context;
  if (context != nullptr && stop_.load()) context->TryCancel();
}

void ClientAgent::Stop() {
  stop_.store(true);
  absl::MutexLock lock(&mu_);
  if (in_flight_ != nullptr) in_flight_->TryCancel();
}

bool ClientAgent::Sleep(absl::Duration d) {
  Clock& clock = *options_.clock;
  absl::MutexLock lock(&mu_);
  // Stop() takes mu_ after setting stop_, which wakes this wait.
  clock.AwaitWithDeadline(
      mu_,
      absl::Condition(
          +[](std::atomic<bool>* stop) { return stop->load(); }, &stop_),
      clock.Now() + d);
  return !stop_.load();
}

bool ClientAgent::BackOff(const absl::Status& status, const char* what) {
  const absl::Time now = options_.clock->Now();
  if (unreachable_since_ == absl::InfiniteFuture()) unreachable_since_ = now;
  if (options_.give_up_after > absl::ZeroDuration() &&
      now - unreachable_since_ >= options_.give_up_after) {
    spdlog::error("giving up: the server was unreachable for {}",
                  absl::FormatDuration(now - unreachable_since_));
    return false;
  }
  // A handshake the server keeps refusing is who this board is, not the
  // network: stop so the unit's restart policy decides what follows. Under
  // TLS 1.3 gRPC only says "Socket closed"; the probe asks why.
  absl::Status refused = status;
  if (absl::IsUnavailable(status) && options_.probe_transport) {
    absl::Status why = options_.probe_transport();
    if (absl::IsPermissionDenied(why)) refused = why;
  }
  const bool identity =
      IsHandshakeFailure(refused) || absl::IsPermissionDenied(refused);
  handshake_failures_ = identity ? handshake_failures_ + 1 : 0;
  if (identity) refusal_ = absl::PermissionDeniedError(refused.message());
  if (handshake_failures_ >= kHandshakeFailuresToStop) {
    spdlog::error("{} failed: {}", what, std::string(refused.message()));
    spdlog::error("the TLS handshake was refused {} times in a row: stopping",
                  handshake_failures_);
    return false;
  }
  const absl::Duration wait = backoff_.Next();
  const std::string retry = absl::StrCat(
      "retry ", backoff_.attempts(), " in ",
      absl::FormatDuration(absl::Trunc(wait, absl::Milliseconds(1))));
  if (identity) {
    spdlog::error("{} failed: {}; {}", what, std::string(refused.message()),
                  retry);
  } else {
    const bool unreachable =
        absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
    spdlog::warn("{} failed ({}){}, {}", what, status.ToString(),
                 unreachable ? ": server unreachable" : "", retry);
  }
  return Sleep(wait);
}

absl::Status ClientAgent::PreparePlan() {
  v1::GetPlanRequest request;
  request.set_client_name(options_.name);
  v1::GetPlanResponse response;
  grpc::ClientContext context;
  wire::SetDeadline(context, options_.rpc_timeout);
  Track(&context);
  absl::Status s =
      wire::FromGrpcStatus(stub_->GetPlan(&context, request, &response));
  Track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  const v1::TrainingPlan& plan = response.plan();
  if (absl::Status valid = runtime::ValidatePlan(plan); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the server sent a plan this board cannot use: ", valid.message()));
  }
  std::optional<runtime::VerifiedModelFile> model_file;
  if (plan.model_format() != runtime::kBuiltinFormat) {
    if (!options_.required_model_sha256.empty() &&
        plan.model_sha256() != options_.required_model_sha256) {
      // The board's own refusal, not the server's: not an identity matter.
      return absl::FailedPreconditionError(absl::StrCat(
          "job '", base::Printable(response.job_id()), "' trains model ",
          base::Printable(plan.model_name()), " with SHA-256 ",
          plan.model_sha256(), "; this board accepts only ",
          options_.required_model_sha256, " (--model_sha256)"));
    }
    ModelFileCache cache(options_.model_cache_dir);
    model_file = cache.Find(plan.model_sha256());
    if (model_file) {
      spdlog::info("model file {} is cached", model_file->path());
    } else {
      FEDBERRY_ASSIGN_OR_RETURN(model_file, FetchModelFile(plan));
    }
  } else if (!options_.required_model_sha256.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", base::Printable(response.job_id()), "' trains built-in model ",
        base::Printable(plan.model_name()),
        "; this board accepts only the model file with SHA-256 ",
        options_.required_model_sha256, " (--model_sha256)"));
  }
  absl::Status bound =
      trainer_.UsePlan(plan, model_file ? &*model_file : nullptr);
  if (!bound.ok()) {
    plan_error_ = std::string(bound.message());
    spdlog::error("this board cannot take part in job '{}': {}",
                  base::Printable(response.job_id()), plan_error_);
    return absl::OkStatus();
  }
  plan_error_.clear();
  spdlog::info("job '{}' plan: {}", base::Printable(response.job_id()),
               runtime::DescribePlan(plan));
  if (options_.allow_data_moves && trainer_.sample_bytes() == 0) {
    spdlog::warn(
        "--allow_data_moves: this board's data source cannot lend samples "
        "(only idx data can); it joins without data moves");
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::VerifiedModelFile> ClientAgent::FetchModelFile(
    const v1::TrainingPlan& plan) {
  ModelFileCache cache(options_.model_cache_dir);
  FEDBERRY_RETURN_IF_ERROR(
      cache.Begin(plan.model_sha256(), plan.model_bytes()));
  v1::PullModelFileRequest request;
  request.set_model_sha256(plan.model_sha256());
  grpc::ClientContext context;
  wire::SetDeadline(context, options_.rpc_timeout);
  Track(&context);
  auto reader = stub_->PullModelFile(&context, request);
  v1::ModelFileChunk chunk;
  absl::Status appended = absl::OkStatus();
  while (appended.ok() && reader->Read(&chunk)) {
    if (chunk.total_bytes() != plan.model_bytes()) {
      appended = absl::DataLossError(
          absl::StrCat("model file piece says ", chunk.total_bytes(),
                       " bytes in all; the plan says ", plan.model_bytes()));
    } else {
      appended = cache.Append(chunk.offset(), chunk.data());
    }
  }
  if (!appended.ok()) context.TryCancel();
  absl::Status s = wire::FromGrpcStatus(reader->Finish());
  Track(nullptr);
  if (!appended.ok()) return appended;
  FEDBERRY_RETURN_IF_ERROR(s);
  FEDBERRY_ASSIGN_OR_RETURN(runtime::VerifiedModelFile stored, cache.Commit());
  spdlog::info("fetched model file {} ({} bytes, SHA-256 verified)",
               stored.path(), plan.model_bytes());
  return stored;
}

absl::Status ClientAgent::Join() {
  v1::JoinRequest request;
  request.set_client_name(options_.name);
  *request.mutable_device() = options_.device;
  const uint64_t samples = trainer_.num_samples();
  const uint32_t boards = trainer_.boards();
  request.set_num_samples(samples);
  request.set_boards(boards);
  request.set_allow_data_moves(options_.allow_data_moves &&
                               trainer_.sample_bytes() > 0);
  request.set_sample_bytes(trainer_.sample_bytes());
  request.set_plan_error(plan_error_);
  request.set_client_version(std::string(FedberryVersion()));
  v1::JoinResponse response;
  grpc::ClientContext context;
  wire::SetDeadline(context, options_.rpc_timeout);
  Track(&context);
  absl::Status s =
      wire::FromGrpcStatus(stub_->Join(&context, request, &response));
  Track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  client_id_ = response.client_id();
  declared_samples_ = samples;
  declared_boards_ = boards;
  spdlog::info("joined job '{}' as {} with {} samples{}", response.job_id(),
               client_id_, samples,
               boards > 0 ? absl::StrCat(" of ", boards, " boards") : "");
  return absl::OkStatus();
}

absl::StatusOr<v1::GetTaskResponse> ClientAgent::GetTask() {
  v1::GetTaskRequest request;
  request.set_client_id(client_id_);
  if (options_.condition) {
    *request.mutable_condition() = options_.condition();
    NoteCondition(request.condition());
  }
  v1::GetTaskResponse response;
  grpc::ClientContext context;
  wire::SetDeadline(context, options_.poll_timeout);
  Track(&context);
  absl::Status s =
      wire::FromGrpcStatus(stub_->GetTask(&context, request, &response));
  Track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  task_sent_bytes_ = request.ByteSizeLong();
  task_received_bytes_ = response.ByteSizeLong();
  return response;
}

void ClientAgent::NoteCondition(const v1::BoardCondition& condition) {
  // Once per change, not per poll: the reason's figures move every poll.
  if (declined_.empty() && !condition.declined().empty()) {
    spdlog::warn("this board sits rounds out: {}",
                 base::Printable(condition.declined()));
  } else if (!declined_.empty() && condition.declined().empty()) {
    spdlog::info("this board takes part in rounds again (it declined: {})",
                 base::Printable(declined_));
  }
  declined_ = condition.declined();
}

absl::StatusOr<runtime::NamedTensors> ClientAgent::PullModel(
    const v1::GetTaskResponse& task) {
  v1::PullModelRequest request;
  request.set_client_id(client_id_);
  request.set_round(task.round());
  request.set_task_id(task.task_id());
  grpc::ClientContext context;
  wire::SetDeadline(context, options_.rpc_timeout);
  Track(&context);
  auto reader = stub_->PullModel(&context, request);
  meter_.AddSent(request.ByteSizeLong());
  runtime::ModelAssembler assembler(task.round(), task.task_id(), std::nullopt);
  absl::Status s =
      ReadStream(context, *reader, [&](const v1::ModelChunk& chunk) {
        meter_.AddReceived(chunk.ByteSizeLong());
        return assembler.Add(chunk);
      });
  Track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  return assembler.Finish();
}

absl::Status ClientAgent::PushUpdate(const v1::GetTaskResponse& task,
                                     const TrainOutcome& outcome,
                                     const v1::ResourceMetrics& resources,
                                     const std::vector<std::string>& kept) {
  grpc::ClientContext context;
  wire::SetDeadline(context, options_.rpc_timeout);
  wire::AddClientId(context, client_id_);
  Track(&context);
  v1::PushUpdateResponse response;
  auto writer = stub_->PushUpdate(&context, &response);
  v1::UpdateChunk message;
  v1::UpdateHeader* header = message.mutable_header();
  header->set_client_id(client_id_);
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
  Track(nullptr);
  return s;
}

absl::Status ClientAgent::DoRound(const v1::GetTaskResponse& task) {
  spdlog::info("round {}/{}: task {}, pulling the global model", task.round(),
               task.total_rounds(), task.task_id());
  meter_.Begin(task_sent_bytes_, task_received_bytes_);
  // Senders hand their samples over first, so receivers wait least.
  v1::ResourceMetrics moved;  // stays empty without data moves
  RoundData data;
  if (task.send_size() > 0) moves_.HandOver(client_id_, task, &data, &moved);
  FEDBERRY_ASSIGN_OR_RETURN(runtime::NamedTensors global, PullModel(task));
  if (task.receive_size() > 0) moves_.Fetch(client_id_, task, &data, &moved);
  {
    absl::MutexLock lock(&mu_);
    current_.set_client_id(client_id_);
    current_.set_round(task.round());
    current_.set_task_id(task.task_id());
    progress_sent_ = options_.clock->Now();
  }
  TaskRef ref{task.round(), task.task_id(), &data, task.total_rounds()};
  ref.progress = [this](int64_t done, int64_t planned) {
    ReportProgress(done, planned);
  };
  absl::StatusOr<TrainOutcome> trained =
      trainer_.Train(ref, task.config(), global, stop_);
  {
    absl::MutexLock lock(&mu_);
    current_.Clear();
  }
  FEDBERRY_ASSIGN_OR_RETURN(TrainOutcome outcome, std::move(trained));
  // The update's chunks are counted before they are sent: the header that
  // carries the figures goes first.
  meter_.AddSent(EncodedBytes(outcome, task.round(), task.task_id()));
  v1::ResourceMetrics resources =
      meter_.Finish(outcome.num_samples, outcome.metrics.train_seconds());
  resources.MergeFrom(moved);
  spdlog::info(
      "round {}: trained on {} samples in {:.2f} s (loss {:.4f}); "
      "pushing the update",
      task.round(), outcome.num_samples, outcome.metrics.train_seconds(),
      outcome.metrics.train_loss());
  if (const uint64_t samples = trainer_.num_samples(),
      boards = trainer_.boards();
      samples != declared_samples_ || boards != declared_boards_) {
    // A gateway whose boards changed: the server bounds the update's weight
    // by what was declared. Joining again keeps this task (same name).
    spdlog::info("round {}: now {} samples of {} boards; joining again",
                 task.round(), samples, boards);
    if (absl::Status s = Join(); !s.ok()) {
      spdlog::warn("joining again failed ({}); pushing as joined before",
                   s.ToString());
    }
  }
  // A push that fails in transit is retried while the round may still be
  // open; the server refuses a duplicate, so a retry is never counted twice.
  int handovers = 0;
  while (true) {
    absl::Status pushed = PushUpdate(task, outcome, resources, data.kept);
    if (pushed.ok()) break;
    if (absl::IsAlreadyExists(pushed)) break;  // an earlier try arrived
    if (absl::IsFailedPrecondition(pushed) &&
        wire::ReasonOf(pushed) == wire::kReasonSamplesMissing &&
        data.lent > 0 && handovers++ < 3) {
      // The server lost the samples this board lent (it restarted): their
      // receivers wait for them, so send them again before the update.
      spdlog::warn("round {}: {}", task.round(), std::string(pushed.message()));
      moves_.HandOverLentAgain(client_id_, task, data);
      continue;
    }
    if (stop_.load()) return pushed;
    if (RefusedForWhatItIs(pushed)) {
      spdlog::error("round {}: the server refused this board's update: {}",
                    task.round(), pushed.ToString());
      return pushed;
    }
    if (!IsTransient(pushed)) return pushed;
    if (!BackOff(pushed, "pushing the update")) return pushed;
  }
  ++rounds_trained_;
  return absl::OkStatus();
}

absl::Status ClientAgent::DoEvaluation(const v1::GetTaskResponse& task) {
  spdlog::info("round {}: evaluating its model on the held-out samples",
               task.round());
  FEDBERRY_ASSIGN_OR_RETURN(runtime::NamedTensors model, PullModel(task));
  absl::StatusOr<BoardEvalOutcome> outcome = trainer_.Evaluate(
      TaskRef{task.round(), task.task_id(), nullptr, task.total_rounds()},
      task.config(), model, stop_);
  if (stop_.load()) return absl::CancelledError("the client was stopped");
  v1::EvaluationReport report;
  report.set_client_id(client_id_);
  report.set_round(task.round());
  report.set_task_id(task.task_id());
  if (outcome.ok()) {
    *report.mutable_global() = outcome->global;
    if (outcome->personalized) {
      *report.mutable_personalized() = *outcome->personalized;
    }
    report.set_eval_seconds(outcome->seconds);
    spdlog::info("round {}: {} held-out samples, loss {:.4f}, accuracy {:.4f}",
                 task.round(), outcome->global.samples(),
                 outcome->global.loss(), outcome->global.accuracy());
  } else {
    // The server is told why, so it does not wait for this board.
    report.set_declined(std::string(outcome.status().message()));
    spdlog::info("round {}: declining to evaluate: {}", task.round(),
                 report.declined());
  }
  return ReportEvaluation(report);
}

absl::Status ClientAgent::ReportEvaluation(const v1::EvaluationReport& report) {
  while (true) {
    v1::ReportEvaluationResponse response;
    grpc::ClientContext context;
    wire::SetDeadline(context, options_.rpc_timeout);
    Track(&context);
    absl::Status s = wire::FromGrpcStatus(
        stub_->ReportEvaluation(&context, report, &response));
    Track(nullptr);
    if (s.ok() || absl::IsAlreadyExists(s)) return absl::OkStatus();
    if (!IsTransient(s) || stop_.load()) return s;
    if (!BackOff(s, "reporting the evaluation")) return s;
  }
}

absl::Status ClientAgent::Run() {
  absl::Status status = RunUntilDone();
  // Stopped by handshakes the server refused: say why, not "Socket closed".
  if (!status.ok() && handshake_failures_ >= kHandshakeFailuresToStop) {
    return refusal_;
  }
  return status;
}

absl::Status ClientAgent::WaitToJoinAgain(const absl::Status& joined) {
  const absl::Status stopped = absl::CancelledError("the client was stopped");
  if (absl::IsFailedPrecondition(joined) &&
      wire::ReasonOf(joined) == wire::kReasonClientTooOld) {
    // Asking again at once would be refused again: an upgrade restarts the
    // service with the new release.
    spdlog::error(
        "the server refuses this fedberry-client {}: {}; upgrade "
        "fedberry-client on this board (asking again in {})",
        std::string(FedberryVersion()), base::Printable(joined.message()),
        absl::FormatDuration(options_.unfit_wait));
    return Sleep(options_.unfit_wait) ? absl::OkStatus() : stopped;
  }
  if (absl::IsFailedPrecondition(joined) &&
      wire::ReasonOf(joined) == wire::kReasonSamplesAboveFleet) {
    // The bound follows the boards taking part: it may admit this board
    // once more have joined, or once the operator raises it.
    spdlog::warn("the server did not admit this board: {} (asking again in {})",
                 base::Printable(joined.message(), 1024),
                 absl::FormatDuration(options_.unfit_wait));
    return Sleep(options_.unfit_wait) ? absl::OkStatus() : stopped;
  }
  if (!plan_error_.empty() && absl::IsFailedPrecondition(joined)) {
    // Told the server why; a later job may fit this board's data.
    spdlog::warn("{}; asking for the job's plan again in {}",
                 std::string(joined.message()),
                 absl::FormatDuration(options_.unfit_wait));
    return Sleep(options_.unfit_wait) ? absl::OkStatus() : stopped;
  }
  // A torn or corrupt model file download is fetched again.
  if (!IsTransient(joined) && !absl::IsDataLoss(joined)) return joined;
  if (!BackOff(joined, "joining")) return joined;
  return absl::OkStatus();
}

absl::Status ClientAgent::TrainTask(const v1::GetTaskResponse& task) {
  if (task.task_id() == given_up_task_) {
    // The server keeps offering the task until the round closes.
    Sleep(absl::Seconds(1));
    return absl::OkStatus();
  }
  absl::Status round = DoRound(task);
  // Checkpointed under memory pressure: end, so the memory is freed.
  if (IsMemoryRelease(round)) return round;
  // Refused for who it is (revoked mid-job): retrying cannot help.
  if (absl::IsPermissionDenied(round) || absl::IsUnauthenticated(round)) {
    return round;
  }
  if (absl::IsFailedPrecondition(round) &&
      (wire::ReasonOf(round) == wire::kReasonLateUpdate ||
       wire::ReasonOf(round) == wire::kReasonStaleUpdate)) {
    // Over-selected and outrun, past the deadline, or (asynchronous
    // rounds) too many versions behind: expected.
    spdlog::info("round {}: {}; waiting for the next round", task.round(),
                 std::string(round.message()));
  } else if (!round.ok() && !stop_.load()) {
    if (!RefusedForWhatItIs(round)) {
      // The round moves on without this update; the next task decides.
      spdlog::warn("round {} failed on this client: {}", task.round(),
                   round.ToString());
      if (!BackOff(round, "the round")) return round;
    } else {
      spdlog::error(
          "round {} failed on this client and is not tried again: {}; "
          "waiting for the next round",
          task.round(), round.ToString());
      given_up_task_ = task.task_id();
    }
  }
  return absl::OkStatus();
}

absl::Status ClientAgent::RunUntilDone() {
  while (!stop_.load()) {
    if (client_id_.empty()) {
      absl::Status joined = PreparePlan();
      if (joined.ok()) joined = Join();
      if (!joined.ok()) {
        if (stop_.load()) break;
        if (absl::Status again = WaitToJoinAgain(joined); !again.ok()) {
          return again;
        }
        continue;
      }
      backoff_.Reset();
      unreachable_since_ = absl::InfiniteFuture();
      handshake_failures_ = 0;
    }
    absl::StatusOr<v1::GetTaskResponse> task = GetTask();
    if (!task.ok()) {
      if (stop_.load()) break;
      if (absl::IsNotFound(task.status())) {
        spdlog::warn("the server does not know this client ({}); joining again",
                     std::string(task.status().message()));
        client_id_.clear();
        continue;
      }
      if (!IsTransient(task.status())) return task.status();
      if (!BackOff(task.status(), "asking for a task")) return task.status();
      continue;
    }
    backoff_.Reset();
    unreachable_since_ = absl::InfiniteFuture();
    handshake_failures_ = 0;
    switch (task->action()) {
      case v1::GetTaskResponse::DONE:
        spdlog::info(
            "the server says the job is done after {} rounds; "
            "this client trained in {}",
            task->round() - 1, rounds_trained_.load());
        return absl::OkStatus();
      case v1::GetTaskResponse::TRAIN:
        FEDBERRY_RETURN_IF_ERROR(TrainTask(*task));
        break;
      case v1::GetTaskResponse::EVALUATE:
        if (absl::Status s = DoEvaluation(*task); !s.ok() && !stop_.load()) {
          // The server's figures go without this board's; the next task
          // decides what follows.
          spdlog::warn("round {}: the evaluation failed on this client: {}",
                       task->round(), s.ToString());
          if (!BackOff(s, "the evaluation")) return s;
        }
        break;
      default:
        Sleep(
            absl::Milliseconds(std::max<uint32_t>(task->retry_after_ms(), 50)));
    }
  }
  return absl::CancelledError("the client was stopped");
}

}  // namespace fedberry::client
