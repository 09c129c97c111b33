#include "server/federation_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "proto/wire.h"
#include "runtime/log_text.h"
#include "runtime/sample_codec.h"
#include "runtime/tensor_codec.h"
#include "runtime/training_plan.h"
#include "server/outgoing_stream.h"

namespace fedberry::server {
namespace {

// Never hold a long poll past the caller's own deadline.
absl::Duration PollBudget(grpc::ServerContextBase* context,
                          absl::Duration max) {
  auto left = context->deadline() - std::chrono::system_clock::now();
  absl::Duration remaining = absl::FromChrono(left) - absl::Milliseconds(500);
  return std::clamp(remaining, absl::ZeroDuration(), max);
}

// Admits a model or sample stream: a stalled one is cancelled (`cancel`)
// at the limiter's deadline, and the call is refused when too many run.
absl::StatusOr<std::optional<StreamLimiter::Ticket>> AdmitStream(
    StreamLimiter* streams, grpc::ServerContextBase* context, const char* what,
    std::function<void()> cancel) {
  if (streams == nullptr) return std::nullopt;
  auto ticket = streams->Admit(
      absl::StrCat(what, " of ", runtime::Printable(context->peer())),
      std::move(cancel));
  if (!ticket.ok()) return ticket.status();
  return std::optional<StreamLimiter::Ticket>(*std::move(ticket));
}

// A synchronous call's handler outlives any cancellation of its ticket.
absl::StatusOr<std::optional<StreamLimiter::Ticket>> AdmitStream(
    StreamLimiter* streams, grpc::ServerContext* context, const char* what) {
  return AdmitStream(streams, context, what,
                     [context] { context->TryCancel(); });
}

// One GetTask call: answered at once, or parked in the coordinator until
// an event or its deadline; a caller that goes away takes its poll back.
// Deletes itself when gRPC is done with the call.
class TaskPoll final : public grpc::ServerUnaryReactor {
 public:
  TaskPoll(RoundCoordinator& coordinator, v1::GetTaskResponse* response)
      : coordinator_(coordinator), response_(response) {}

  void Start(const std::string& client_id, absl::Time deadline) {
    absl::MutexLock lock(&mu_);  // an early answer waits for poll_id_
    auto now = coordinator_.PollTask(
        client_id, deadline,
        [this](absl::StatusOr<v1::GetTaskResponse> task) {
          { absl::MutexLock lock(&mu_); }
          Answer(std::move(task));
        },
        poll_id_);
    if (now) Answer(*std::move(now));
  }

  void OnCancel() override {
    uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = poll_id_;
    }
    if (id != 0 && coordinator_.CancelTaskPoll(id)) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the caller went away during GetTask"));
    }
  }

  void OnDone() override { delete this; }

 private:
  void Answer(absl::StatusOr<v1::GetTaskResponse> task) {
    if (!task.ok()) {
      Finish(wire::ToGrpcStatus(task.status()));
      return;
    }
    *response_ = *std::move(task);
    Finish(grpc::Status::OK);
  }

  RoundCoordinator& coordinator_;
  v1::GetTaskResponse* const response_;
  absl::Mutex mu_;
  uint64_t poll_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

FederationService::FederationService(RoundCoordinator& coordinator,
                                     absl::Duration max_poll,
                                     StreamLimiter* streams, ServedPlan plan,
                                     security::AccessPolicy access,
                                     StreamLimiter* updates)
    : coordinator_(coordinator),
      max_poll_(max_poll),
      streams_(streams),
      updates_(updates),
      plan_(std::move(plan)),
      access_(access) {}

grpc::Status FederationService::Authorize(grpc::ServerContextBase* context,
                                          const char* call,
                                          const std::string& client_id) {
  auto caller = access_.Admit(*context, call);
  if (!caller.ok()) return wire::ToGrpcStatus(caller.status());
  if (client_id.empty() || !access_.requires_identity()) {
    return grpc::Status::OK;
  }
  auto owner = coordinator_.NameOf(client_id);
  if (!owner.ok()) return grpc::Status::OK;
  return wire::ToGrpcStatus(
      access_.CheckOwner(*caller, client_id, *owner, call));
}

grpc::Status FederationService::GetPlan(grpc::ServerContext* context,
                                        const v1::GetPlanRequest* request,
                                        v1::GetPlanResponse* response) {
  if (grpc::Status ok = Authorize(context, "GetPlan"); !ok.ok()) return ok;
  response->set_job_id(coordinator_.options().job_id);
  *response->mutable_plan() =
      plan_.plan.model_format().empty()
          ? runtime::DefaultImagePlan(coordinator_.options().train)
          : plan_.plan;
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::ModelFileChunk>* FederationService::PullModelFile(
    grpc::CallbackServerContext* context,
    const v1::PullModelFileRequest* request) {
  using Stream = OutgoingStream<v1::ModelFileChunk>;
  if (grpc::Status ok = Authorize(context, "PullModelFile"); !ok.ok()) {
    return Stream::Refused(ok);
  }
  if (!plan_.model_file ||
      request->model_sha256() != plan_.plan.model_sha256()) {
    return Stream::Refused(wire::ToGrpcStatus(absl::NotFoundError(
        absl::StrCat("this job has no model file with SHA-256 ",
                     runtime::Printable(request->model_sha256(), 64)))));
  }
  auto canceller = std::make_shared<CallCanceller>(context);
  auto ticket = AdmitStream(streams_, context, "PullModelFile",
                            CallCanceller::CallbackOf(canceller));
  if (!ticket.ok()) return Stream::Refused(wire::ToGrpcStatus(ticket.status()));
  size_t offset = 0;
  auto next = [file = plan_.model_file,
               offset](v1::ModelFileChunk& chunk) mutable {
    if (offset >= file->size()) return false;
    chunk.set_total_bytes(file->size());
    chunk.set_offset(offset);
    chunk.set_data(file->data() + offset,
                   std::min<size_t>(wire::kChunkBytes, file->size() - offset));
    offset += wire::kChunkBytes;
    return true;
  };
  return Stream::Start(std::move(next), *std::move(ticket),
                       std::move(canceller), "PullModelFile");
}

grpc::Status FederationService::Join(grpc::ServerContext* context,
                                     const v1::JoinRequest* request,
                                     v1::JoinResponse* response) {
  auto caller = access_.Admit(*context, "Join");
  if (!caller.ok()) return wire::ToGrpcStatus(caller.status());
  if (absl::Status named = access_.CheckJoin(*caller, request->client_name());
      !named.ok()) {
    return wire::ToGrpcStatus(named);
  }
  auto joined = coordinator_.Join(*request);
  if (!joined.ok()) return wire::ToGrpcStatus(joined.status());
  *response = *std::move(joined);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* FederationService::GetTask(
    grpc::CallbackServerContext* context, const v1::GetTaskRequest* request,
    v1::GetTaskResponse* response) {
  auto* poll = new TaskPoll(coordinator_, response);
  if (grpc::Status ok = Authorize(context, "GetTask", request->client_id());
      !ok.ok()) {
    poll->Finish(ok);
    return poll;
  }
  poll->Start(request->client_id(),
              absl::Now() + PollBudget(context, max_poll_));
  return poll;
}

grpc::ServerWriteReactor<v1::ModelChunk>* FederationService::PullModel(
    grpc::CallbackServerContext* context, const v1::PullModelRequest* request) {
  using Stream = OutgoingStream<v1::ModelChunk>;
  if (grpc::Status ok = Authorize(context, "PullModel", request->client_id());
      !ok.ok()) {
    return Stream::Refused(ok);
  }
  auto model = coordinator_.ModelFor(*request);
  if (!model.ok()) return Stream::Refused(wire::ToGrpcStatus(model.status()));
  auto canceller = std::make_shared<CallCanceller>(context);
  auto ticket = AdmitStream(streams_, context, "the model stream",
                            CallCanceller::CallbackOf(canceller));
  if (!ticket.ok()) return Stream::Refused(wire::ToGrpcStatus(ticket.status()));
  // The encoded tensors and the chunker over them live as long as the
  // stream (RAW tensors are the global model's, not copies).
  struct Source {
    std::vector<runtime::EncodedTensor> tensors;
    std::optional<runtime::ModelChunker> chunker;
  };
  auto source = std::make_shared<Source>();
  auto tensors = runtime::EncodeModelTensors(
      **model, coordinator_.options().model_encoding);
  if (!tensors.ok()) {
    return Stream::Refused(wire::ToGrpcStatus(tensors.status()));
  }
  source->tensors = *std::move(tensors);
  source->chunker.emplace(source->tensors, request->round(), request->task_id(),
                          wire::kChunkBytes);
  return Stream::Start(
      [source](v1::ModelChunk& chunk) { return source->chunker->Next(chunk); },
      *std::move(ticket), std::move(canceller), "the model stream");
}

grpc::Status FederationService::RefuseUpdate(const v1::UpdateHeader& header,
                                             const absl::Status& status) {
  spdlog::warn("refused update from {} for round {}: {}",
               runtime::Printable(header.client_id()), header.round(),
               std::string(status.message()));
  if (absl::IsInvalidArgument(status)) {
    // Refused for what it carries (NaN figures or tensors, a weight beyond
    // the task, wrong shapes): the board does not resend it, and the
    // coordinator stops awaiting it if it is a selected board of the open
    // round's task.
    coordinator_.CountRefusedUpdate(header);
  } else {
    coordinator_.CountRejected();
  }
  return wire::ToGrpcStatus(status);
}

// One PushUpdate call, a message at a time: the header is checked before
// any tensor is read (and the board waits for the initial metadata that
// says it was), then chunks go into the update's staging tensors as they
// arrive, and the whole update is checked and added at the end. Deletes
// itself when gRPC is done with the call.
class FederationService::UpdatePush final
    : public grpc::ServerReadReactor<v1::UpdateChunk> {
 public:
  UpdatePush(FederationService& service, grpc::CallbackServerContext* context,
             v1::PushUpdateResponse* response)
      : service_(service),
        context_(context),
        response_(response),
        canceller_(std::make_shared<CallCanceller>(context)) {}

  void Start() {
    RoundCoordinator& coordinator = service_.coordinator_;
    if (grpc::Status ok = service_.Authorize(context_, "PushUpdate");
        !ok.ok()) {
      coordinator.CountRejected();
      Finish(ok);
      return;
    }
    auto stream = AdmitStream(service_.streams_, context_, "the update stream",
                              CallCanceller::CallbackOf(canceller_));
    if (!stream.ok()) {
      Finish(wire::ToGrpcStatus(stream.status()));
      return;
    }
    if (*stream) stream_.emplace(std::move(**stream));
    auto slot = AdmitStream(service_.updates_, context_, "an update",
                            CallCanceller::CallbackOf(canceller_));
    if (!slot.ok()) {
      Finish(wire::ToGrpcStatus(slot.status()));
      return;
    }
    if (*slot) slot_.emplace(std::move(**slot));
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!assembler_) {
      OnHeader(ok);
    } else {
      OnChunk(ok);
    }
  }

  void OnDone() override {
    canceller_->Detach();
    delete this;
  }

 private:
  void OnHeader(bool ok) {
    RoundCoordinator& coordinator = service_.coordinator_;
    if (!ok || !message_.has_header()) {
      coordinator.CountRejected();
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "an update stream must start with an UpdateHeader"));
      return;
    }
    header_ = message_.header();
    if (grpc::Status owner =
            service_.Authorize(context_, "PushUpdate", header_.client_id());
        !owner.ok()) {
      coordinator.CountRejected();
      Finish(owner);
      return;
    }
    auto expected = coordinator.BeginUpdate(header_);
    if (!expected.ok()) {
      Finish(service_.RefuseUpdate(header_, expected.status()));
      return;
    }
    assembler_.emplace(header_.round(), header_.task_id(),
                       std::move(expected->specs), std::move(expected->global));
    // Admitted: the board waits for this before it sends its chunks, so a
    // push refused above cost it and the server a header, not an update.
    StartSendInitialMetadata();
    StartRead(&message_);
  }

  void OnChunk(bool ok) {
    if (ok) {
      absl::Status added =
          message_.has_chunk()
              ? assembler_->Add(message_.chunk())
              : absl::InvalidArgumentError(
                    "update stream carries a second header; expected model "
                    "chunks");
      if (added.ok()) {
        StartRead(&message_);
      } else {
        Finish(service_.RefuseUpdate(header_, added));
      }
      return;
    }
    // The board closed its side: the update is whole, or it ended early.
    auto update = assembler_->Finish();
    absl::StatusOr<int> held =
        update.ok() ? service_.coordinator_.SubmitUpdate(header_, *update)
                    : absl::StatusOr<int>(update.status());
    if (!held.ok()) {
      Finish(service_.RefuseUpdate(header_, held.status()));
      return;
    }
    response_->set_received_updates(static_cast<uint32_t>(*held));
    Finish(grpc::Status::OK);
  }

  FederationService& service_;
  grpc::CallbackServerContext* const context_;
  v1::PushUpdateResponse* const response_;
  std::shared_ptr<CallCanceller> canceller_;
  std::optional<StreamLimiter::Ticket> stream_;
  std::optional<StreamLimiter::Ticket> slot_;
  v1::UpdateChunk message_;
  v1::UpdateHeader header_;
  std::optional<runtime::ModelAssembler> assembler_;
};

grpc::ServerReadReactor<v1::UpdateChunk>* FederationService::PushUpdate(
    grpc::CallbackServerContext* context, v1::PushUpdateResponse* response) {
  auto* push = new UpdatePush(*this, context, response);
  push->Start();
  return push;
}

grpc::Status FederationService::Heartbeat(grpc::ServerContext* context,
                                          const v1::HeartbeatRequest* request,
                                          v1::HeartbeatResponse* response) {
  if (grpc::Status ok = Authorize(context, "Heartbeat", request->client_id());
      !ok.ok()) {
    return ok;
  }
  return wire::ToGrpcStatus(coordinator_.Heartbeat(*request));
}

grpc::Status FederationService::PushSamples(
    grpc::ServerContext* context, grpc::ServerReader<v1::SampleChunk>* reader,
    v1::PushSamplesResponse* response) {
  if (grpc::Status ok = Authorize(context, "PushSamples"); !ok.ok()) {
    return ok;
  }
  auto ticket = AdmitStream(streams_, context, "the sample push");
  if (!ticket.ok()) return wire::ToGrpcStatus(ticket.status());
  v1::SampleChunk chunk;
  if (!reader->Read(&chunk)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "a sample stream must carry at least one chunk");
  }
  const runtime::SampleStreamRef ref{chunk.client_id(), chunk.round(),
                                     chunk.task_id(), chunk.move_id()};
  if (grpc::Status ok = Authorize(context, "PushSamples", ref.client_id);
      !ok.ok()) {
    return ok;
  }
  auto sender =
      coordinator_.ClientNameForTask(ref.client_id, ref.round, ref.task_id);
  // Checked before the stream is read: a retried push of samples already
  // here, or one the server would refuse, costs no transfer.
  absl::StatusOr<PlannedMove> move =
      sender.ok() ? coordinator_.relay().MoveToDeposit(*sender, ref.move_id)
                  : absl::StatusOr<PlannedMove>(sender.status());
  absl::Status status = move.status();
  std::optional<runtime::SampleAssembler> assembler;
  if (status.ok()) {
    assembler.emplace(ref, move->samples);
    do {
      status = assembler->Add(chunk);
    } while (status.ok() && reader->Read(&chunk));
  }
  if (status.ok()) {
    auto samples = assembler->Finish();
    status = samples.ok() ? coordinator_.relay().Deposit(*sender, ref.move_id,
                                                         *std::move(samples))
                          : samples.status();
  }
  if (!status.ok()) {
    if (!absl::IsAlreadyExists(status)) {
      spdlog::warn("refused the samples of data move {} from {}: {}",
                   runtime::Printable(ref.move_id),
                   runtime::Printable(ref.client_id),
                   std::string(status.message()));
    }
    return wire::ToGrpcStatus(status);
  }
  spdlog::info("round {}: data move {}: received {} samples from {}", ref.round,
               runtime::Printable(ref.move_id), move->samples, *sender);
  response->set_received_samples(move->samples);
  return grpc::Status::OK;
}

grpc::Status FederationService::PullSamples(
    grpc::ServerContext* context, const v1::PullSamplesRequest* request,
    grpc::ServerWriter<v1::SampleChunk>* writer) {
  if (grpc::Status ok = Authorize(context, "PullSamples", request->client_id());
      !ok.ok()) {
    return ok;
  }
  auto receiver = coordinator_.ClientNameForTask(
      request->client_id(), request->round(), request->task_id());
  if (!receiver.ok()) return wire::ToGrpcStatus(receiver.status());
  // Wait for the sender, but never past the caller's own deadline.
  const absl::Time deadline =
      absl::Now() + PollBudget(context, coordinator_.data_move_wait());
  auto samples =
      coordinator_.relay().Take(*receiver, request->move_id(), deadline);
  if (!samples.ok()) return wire::ToGrpcStatus(samples.status());
  auto ticket = AdmitStream(streams_, context, "the sample pull");
  if (!ticket.ok()) return wire::ToGrpcStatus(ticket.status());
  absl::Status sent = runtime::EncodeSamples(
      **samples,
      {request->client_id(), request->round(), request->task_id(),
       request->move_id()},
      [&](const v1::SampleChunk& chunk) {
        return !context->IsCancelled() && writer->Write(chunk);
      });
  if (sent.ok()) {
    spdlog::info("round {}: data move {}: {} samples sent to {}",
                 request->round(), runtime::Printable(request->move_id()),
                 (*samples)->rows, *receiver);
  }
  return wire::ToGrpcStatus(sent);
}

}  // namespace fedberry::server
