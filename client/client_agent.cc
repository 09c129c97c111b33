#include "client/client_agent.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "client/agent_rpc.h"
#include "client/identity_refusal.h"
#include "client/memory_release.h"
#include "client/secagg_board.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"

namespace fedberry::client {
namespace {

// The work itself was refused (an update beyond the bounds, a model that
// does not fit): doing the same task again would be refused again.
bool RefusedForWhatItIs(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsPermissionDenied(s) ||
         absl::IsUnauthenticated(s) || absl::IsOutOfRange(s);
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
              [this] { return stop_.load(); }}),
      join_({stub_.get(), &trainer_, options_.rpc_timeout,
             [this](grpc::ClientContext* context) { Track(context); },
             options_.name, options_.device, options_.allow_data_moves,
             options_.model_cache_dir, options_.required_model_sha256}),
      reports_({stub_.get(), options_.rpc_timeout, options_.clock,
                [this](grpc::ClientContext* context) { Track(context); },
                [this](const absl::Status& status, const char* what) {
                  return BackOff(status, what);
                },
                [this] { return stop_.load(); }}) {
  if (options_.watchdog_totals) meter_.SetWatchdog(options_.watchdog_totals);
}

void ClientAgent::Heartbeat(v1::HeartbeatRequest::State state,
                            absl::Duration paused_for) {
  reports_.Heartbeat(state, paused_for);
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

absl::StatusOr<v1::GetTaskResponse> ClientAgent::GetTask() {
  v1::GetTaskRequest request;
  request.set_client_id(join_.client_id());
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
  request.set_client_id(join_.client_id());
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

absl::Status ClientAgent::DoRound(const v1::GetTaskResponse& task) {
  spdlog::info("round {}/{}: task {}, pulling the global model", task.round(),
               task.total_rounds(), task.task_id());
  meter_.Begin(task_sent_bytes_, task_received_bytes_);
  // Senders hand their samples over first, so receivers wait least.
  // The id as it stands (a reference: joining again below may change it).
  const std::string& client_id = join_.client_id();
  v1::ResourceMetrics moved;  // stays empty without data moves
  RoundData data;
  if (task.send_size() > 0) moves_.HandOver(client_id, task, &data, &moved);
  FEDBERRY_ASSIGN_OR_RETURN(runtime::NamedTensors global, PullModel(task));
  if (task.receive_size() > 0) moves_.Fetch(client_id, task, &data, &moved);
  reports_.BeginTask(client_id, task.round(), task.task_id());
  TaskRef ref{task.round(), task.task_id(), &data, task.total_rounds()};
  ref.progress = [this](int64_t done, int64_t planned) {
    reports_.Progress(done, planned);
  };
  absl::StatusOr<TrainOutcome> trained =
      trainer_.Train(ref, task.config(), global, stop_);
  reports_.EndTask();
  FEDBERRY_ASSIGN_OR_RETURN(TrainOutcome outcome, std::move(trained));
  if (task.has_secagg()) return SendMasked(task, global, outcome);
  // The update's chunks are counted before they are sent: the header that
  // carries the figures goes first.
  meter_.AddSent(EncodedUpdateBytes(outcome, task.round(), task.task_id()));
  v1::ResourceMetrics resources =
      meter_.Finish(outcome.num_samples, outcome.metrics.train_seconds());
  resources.MergeFrom(moved);
  spdlog::info(
      "round {}: trained on {} samples in {:.2f} s (loss {:.4f}); "
      "pushing the update",
      task.round(), outcome.num_samples, outcome.metrics.train_seconds(),
      outcome.metrics.train_loss());
  if (join_.DeclarationChanged()) {
    // A gateway whose boards changed: the server bounds the update's weight
    // by what was declared. Joining again keeps this task (same name).
    spdlog::info("round {}: now {} samples of {} boards; joining again",
                 task.round(), trainer_.num_samples(), trainer_.boards());
    if (absl::Status s = join_.Join(); !s.ok()) {
      spdlog::warn("joining again failed ({}); pushing as joined before",
                   s.ToString());
    }
  }
  // A push that fails in transit is retried while the round may still be
  // open; the server refuses a duplicate, so a retry is never counted twice.
  int handovers = 0;
  while (true) {
    absl::Status pushed =
        reports_.PushUpdate(client_id, task, outcome, resources, data.kept);
    if (pushed.ok()) break;
    if (absl::IsAlreadyExists(pushed)) break;  // an earlier try arrived
    if (absl::IsFailedPrecondition(pushed) &&
        wire::ReasonOf(pushed) == wire::kReasonSamplesMissing &&
        data.lent > 0 && handovers++ < 3) {
      // The server lost the samples this board lent (it restarted): their
      // receivers wait for them, so send them again before the update.
      spdlog::warn("round {}: {}", task.round(), std::string(pushed.message()));
      moves_.HandOverLentAgain(client_id, task, data);
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

absl::Status ClientAgent::SendMasked(const v1::GetTaskResponse& task,
                                     const runtime::NamedTensors& global,
                                     const TrainOutcome& outcome) {
  spdlog::info(
      "round {}: trained on {} samples in {:.2f} s (loss {:.4f}); sending "
      "the update masked (secure aggregation, session {})",
      task.round(), outcome.num_samples, outcome.metrics.train_seconds(),
      outcome.metrics.train_loss(), base::Printable(task.secagg().session()));
  SecAggCalls calls;
  calls.stub = stub_.get();
  calls.rpc_timeout = options_.rpc_timeout;
  calls.clock = options_.clock;
  calls.fs = &base::FileSystem::Default();
  calls.state_dir = options_.secagg_state_dir;
  calls.before_stage = options_.secagg_before_stage;
  calls.fleet_key_file = options_.secagg_key_file;
  calls.fleet_ca_file = options_.secagg_ca_file;
  calls.wrap_signer = options_.secagg_wrap_signer;
  calls.on_words = options_.secagg_on_words;
  calls.track = [this](grpc::ClientContext* c) { Track(c); };
  calls.stop = &stop_;
  uint64_t bytes = 0;
  absl::Status sent =
      SendMaskedUpdate(calls, join_.client_id(), task, global, outcome, &bytes);
  if (sent.ok()) {
    ++rounds_trained_;
    spdlog::info("round {}: masked update counted ({} bytes sent)",
                 task.round(), bytes);
    return sent;
  }
  // The link's failures and a stop are the loop's to handle; any other
  // refusal (its session given up, its keys or input refused) costs this
  // board the round only.
  if (absl::IsCancelled(sent) || absl::IsUnavailable(sent) ||
      absl::IsDeadlineExceeded(sent)) {
    return sent;
  }
  spdlog::warn("round {}: secure aggregation went on without this board: {}",
               task.round(), base::Printable(sent.ToString(), 400));
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
  report.set_client_id(join_.client_id());
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
  return reports_.ReportEvaluation(report);
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
  if (!join_.plan_error().empty() && absl::IsFailedPrecondition(joined)) {
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
    if (join_.client_id().empty()) {
      absl::Status joined = join_.PreparePlan();
      if (joined.ok()) joined = join_.Join();
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
        join_.Forget();
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
