#include "server/federation_service.h"

#include <grpcpp/alarm.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "proto/wire.h"
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

// A stream as the limiter's log names it: what, and whose (`caller`, from
// Authorize).
std::string StreamName(const char* what, const std::string& caller) {
  return absl::StrCat(what, " of ", caller);
}

// Admits a stream into `streams` (null: no limit) for a reactor that keeps
// its ticket in `into` until gRPC is done with the call: a stalled one is
// cancelled through `canceller` at the limiter's deadline. The status to
// finish with when too many run.
grpc::Status AdmitInto(StreamLimiter* streams, const std::string& caller,
                       const char* what,
                       const std::shared_ptr<CallCanceller>& canceller,
                       std::optional<StreamLimiter::Ticket>& into) {
  if (streams == nullptr) return grpc::Status::OK;
  auto ticket = streams->Admit(StreamName(what, caller), caller,
                               CallCanceller::CallbackOf(canceller));
  if (!ticket.ok()) return wire::ToGrpcStatus(ticket.status());
  into.emplace(*std::move(ticket));
  return grpc::Status::OK;
}

// A unary callback call answered at once.
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

// One GetTask call: answered at once, or parked in the coordinator until
// an event or its deadline; a caller that goes away takes its poll back.
// Deletes itself when gRPC is done with the call.
class TaskPoll final : public grpc::ServerUnaryReactor {
 public:
  TaskPoll(RoundCoordinator& coordinator, v1::GetTaskResponse* response)
      : coordinator_(coordinator), response_(response) {}

  void Start(const v1::GetTaskRequest& request, absl::Time deadline) {
    absl::MutexLock lock(&mu_);  // an early answer waits for poll_id_
    auto now = coordinator_.PollTask(
        request.client_id(), request.condition(), deadline,
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
                                     StreamBounds bounds, ServedPlan plan,
                                     security::AccessPolicy access,
                                     Clock& clock)
    : coordinator_(coordinator),
      max_poll_(max_poll),
      streams_(bounds.streams),
      updates_(bounds.updates),
      headers_(bounds.headers),
      plan_(std::move(plan)),
      access_(access),
      clock_(clock) {}

grpc::Status FederationService::Authorize(grpc::ServerContextBase* context,
                                          const char* call,
                                          const std::string& client_id,
                                          std::string* caller_key) {
  auto caller = access_.Admit(*context, call);
  if (!caller.ok()) return wire::ToGrpcStatus(caller.status());
  if (caller_key != nullptr) {
    // A certificate is one board wherever it connects from; without one, a
    // connection is all the server knows (boards behind one address, or
    // emulated on one machine, share it).
    *caller_key =
        caller->authenticated
            ? absl::StrCat("certificate ", base::Printable(caller->name))
            : absl::StrCat("connection ", base::Printable(context->peer()));
  }
  if (client_id.empty() || !access_.requires_identity()) {
    return grpc::Status::OK;
  }
  auto owner = coordinator_.NameOf(client_id);
  if (!owner.ok()) return grpc::Status::OK;
  return wire::ToGrpcStatus(
      access_.CheckOwner(*caller, client_id, *owner, call));
}

grpc::ServerUnaryReactor* FederationService::GetPlan(
    grpc::CallbackServerContext* context, const v1::GetPlanRequest* request,
    v1::GetPlanResponse* response) {
  if (grpc::Status ok = Authorize(context, "GetPlan"); !ok.ok()) {
    return Answer(context, ok);
  }
  response->set_job_id(coordinator_.options().job_id);
  *response->mutable_plan() =
      plan_.plan.model_format().empty()
          ? runtime::DefaultImagePlan(coordinator_.options().train)
          : plan_.plan;
  return Answer(context, grpc::Status::OK);
}

grpc::ServerWriteReactor<v1::ModelFileChunk>* FederationService::PullModelFile(
    grpc::CallbackServerContext* context,
    const v1::PullModelFileRequest* request) {
  using Stream = OutgoingStream<v1::ModelFileChunk>;
  std::string caller;
  if (grpc::Status ok = Authorize(context, "PullModelFile", "", &caller);
      !ok.ok()) {
    return Stream::Refused(ok);
  }
  if (!plan_.model_file ||
      request->model_sha256() != plan_.plan.model_sha256()) {
    return Stream::Refused(wire::ToGrpcStatus(absl::NotFoundError(
        absl::StrCat("this job has no model file with SHA-256 ",
                     base::Printable(request->model_sha256(), 64)))));
  }
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
  return Stream::StartInTurn(
      std::move(next), streams_, context, "PullModelFile",
      StreamName("the model file stream", caller), caller);
}

grpc::ServerUnaryReactor* FederationService::Join(
    grpc::CallbackServerContext* context, const v1::JoinRequest* request,
    v1::JoinResponse* response) {
  auto caller = access_.Admit(*context, "Join");
  if (!caller.ok()) return Answer(context, wire::ToGrpcStatus(caller.status()));
  if (absl::Status named = access_.CheckJoin(*caller, request->client_name());
      !named.ok()) {
    return Answer(context, wire::ToGrpcStatus(named));
  }
  auto joined = coordinator_.Join(*request, caller->Owner());
  if (!joined.ok()) return Answer(context, wire::ToGrpcStatus(joined.status()));
  *response = *std::move(joined);
  return Answer(context, grpc::Status::OK);
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
  poll->Start(*request, clock_.Now() + PollBudget(context, max_poll_));
  return poll;
}

grpc::ServerWriteReactor<v1::ModelChunk>* FederationService::PullModel(
    grpc::CallbackServerContext* context, const v1::PullModelRequest* request) {
  using Stream = OutgoingStream<v1::ModelChunk>;
  std::string caller;
  if (grpc::Status ok =
          Authorize(context, "PullModel", request->client_id(), &caller);
      !ok.ok()) {
    return Stream::Refused(ok);
  }
  auto model = coordinator_.ModelFor(*request);
  if (!model.ok()) return Stream::Refused(wire::ToGrpcStatus(model.status()));
  // One encoding of the model for all its pulls (RAW tensors are the global
  // model's, not copies).
  auto tensors =
      encoded_models_.Get(*model, coordinator_.options().model_encoding);
  if (!tensors.ok()) {
    return Stream::Refused(wire::ToGrpcStatus(tensors.status()));
  }
  struct Source {
    std::shared_ptr<const EncodedModelCache::Encoded> tensors;
    std::optional<runtime::ModelChunker> chunker;
  };
  auto source = std::make_shared<Source>();
  source->tensors = *std::move(tensors);
  source->chunker.emplace(*source->tensors, request->round(),
                          request->task_id(), wire::kChunkBytes);
  return Stream::StartInTurn(
      [source](v1::ModelChunk& chunk) { return source->chunker->Next(chunk); },
      streams_, context, "the model stream",
      StreamName("the model stream", caller), caller);
}

grpc::Status FederationService::RefuseUpdate(const v1::UpdateHeader& header,
                                             const absl::Status& status) {
  spdlog::warn("refused update from {} for round {}: {}",
               base::Printable(header.client_id()), header.round(),
               std::string(status.message()));
  if (absl::IsInvalidArgument(status)) {
    // Refused for what it carries (NaN figures or tensors, a weight beyond
    // the task, wrong shapes): the board does not resend it, and the
    // coordinator stops awaiting it if it is a selected board of the open
    // round's task.
    coordinator_.CountRefusedUpdate(header, std::string(status.message()));
  } else {
    coordinator_.CountRejected();
  }
  return wire::ToGrpcStatus(status);
}

// One PushUpdate call, a message at a time: the header is checked before
// any tensor is read, then the push waits its turn among --max_inflight_updates
// (first come first served, without a thread), then the go-ahead
// (wire::kPushTurnMetadata in the initial metadata, which the board waits
// for before it sends its chunks) lets the chunks into the update's staging
// tensors as they arrive, and the whole update is checked and added at the
// end. Deletes itself when gRPC is done with the call.
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
    if (grpc::Status ok =
            service_.Authorize(context_, "PushUpdate", "", &caller_);
        !ok.ok()) {
      service_.coordinator_.CountRejected();
      Finish(ok);
      return;
    }
    if (grpc::Status admitted =
            AdmitInto(service_.headers_, caller_, "an update header",
                      canceller_, header_wait_);
        !admitted.ok()) {
      service_.coordinator_.Seen(wire::ClientIdOf(*context_));
      Finish(admitted);
      return;
    }
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!assembler_) {
      OnHeader(ok);
    } else {
      OnChunk(ok);
    }
  }

  void OnCancel() override {
    // Admitted meanwhile: its read fails, which ends the call.
    if (turn_.Withdraw()) {
      service_.coordinator_.CountRejected();
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the caller went away while its update waited for "
                          "its turn"));
    }
  }

  void OnDone() override {
    canceller_->Detach();
    delete this;
  }

 private:
  void OnHeader(bool ok) {
    RoundCoordinator& coordinator = service_.coordinator_;
    header_wait_.reset();  // the header is here (or never comes)
    if (!ok && context_->IsCancelled()) {  // gone, or stalled past its time
      coordinator.CountRejected();
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the caller went away before its update's header"));
      return;
    }
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
    expected_ = *std::move(expected);
    WaitForTurn();
  }

  // Pushes have their own bound, not --max_streams: sharing it, they were
  // refused for as long as a round's pulls queued for it.
  void WaitForTurn() {
    StreamLimiter* updates = service_.updates_;
    if (updates == nullptr) return Go();
    absl::StatusOr<bool> now =
        turn_.Request(*updates, StreamName("an update push", caller_), caller_,
                      CallCanceller::CallbackOf(canceller_), [this] { Go(); });
    if (!now.ok()) {
      // Told "busy", the board was still heard from: after the last round
      // it is owed its DONE.
      service_.coordinator_.Seen(header_.client_id());
      Finish(wire::ToGrpcStatus(now.status()));
    } else if (*now) {
      Go();
    }
  }

  // Its turn: the staging tensors, then the go-ahead and the first chunk.
  void Go() {
    assembler_.emplace(header_.round(), header_.task_id(),
                       std::move(expected_.specs), std::move(expected_.global));
    assembler_->Reuse(service_.staging_.Take());
    context_->AddInitialMetadata(wire::kPushTurnMetadata, wire::kPushTurnGo);
    StartSendInitialMetadata();
    StartRead(&message_);
  }

  void OnChunk(bool ok) {
    if (ok) {
      turn_.Progress();
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
    if (context_->IsCancelled()) {  // gone, or stalled past its time
      service_.coordinator_.CountRejected();
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the caller went away during PushUpdate"));
      return;
    }
    // The board closed its side: the update is whole, or it ended early.
    auto update = assembler_->Finish();
    absl::StatusOr<int> held =
        update.ok() ? service_.coordinator_.SubmitUpdate(header_, *update)
                    : absl::StatusOr<int>(update.status());
    if (update.ok()) service_.staging_.Give(*std::move(update));
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
  std::string caller_;  // whom its place counts against
  std::optional<StreamLimiter::Ticket> header_wait_;  // until the header
  StreamTurn turn_;  // its place among --max_inflight_updates
  v1::UpdateChunk message_;
  v1::UpdateHeader header_;
  RoundCoordinator::UpdateExpectation expected_;  // from BeginUpdate
  std::optional<runtime::ModelAssembler> assembler_;
};

grpc::ServerReadReactor<v1::UpdateChunk>* FederationService::PushUpdate(
    grpc::CallbackServerContext* context, v1::PushUpdateResponse* response) {
  auto* push = new UpdatePush(*this, context, response);
  push->Start();
  return push;
}

grpc::ServerUnaryReactor* FederationService::Heartbeat(
    grpc::CallbackServerContext* context, const v1::HeartbeatRequest* request,
    v1::HeartbeatResponse* response) {
  grpc::Status ok = Authorize(context, "Heartbeat", request->client_id());
  return Answer(
      context,
      ok.ok() ? wire::ToGrpcStatus(coordinator_.Heartbeat(*request)) : ok);
}

grpc::ServerUnaryReactor* FederationService::ReportEvaluation(
    grpc::CallbackServerContext* context, const v1::EvaluationReport* request,
    v1::ReportEvaluationResponse* response) {
  grpc::Status ok =
      Authorize(context, "ReportEvaluation", request->client_id());
  return Answer(context, ok.ok() ? wire::ToGrpcStatus(
                                       coordinator_.ReportEvaluation(*request))
                                 : ok);
}

// One PushSamples call (a data move's samples, sender to server), a message
// at a time: the first chunk names the move, which is checked before the
// rest is read. Deletes itself when gRPC is done with the call.
class FederationService::SamplePush final
    : public grpc::ServerReadReactor<v1::SampleChunk> {
 public:
  SamplePush(FederationService& service, grpc::CallbackServerContext* context,
             v1::PushSamplesResponse* response)
      : service_(service),
        context_(context),
        response_(response),
        canceller_(std::make_shared<CallCanceller>(context)) {}

  void Start() {
    std::string caller;
    if (grpc::Status ok =
            service_.Authorize(context_, "PushSamples", "", &caller);
        !ok.ok()) {
      Finish(ok);
      return;
    }
    if (grpc::Status admitted = AdmitInto(
            service_.streams_, caller, "the sample push", canceller_, ticket_);
        !admitted.ok()) {
      Finish(admitted);
      return;
    }
    StartRead(&chunk_);
  }

  void OnReadDone(bool ok) override {
    if (!assembler_) {
      OnFirst(ok);
      return;
    }
    absl::Status status;
    if (ok) {
      if (ticket_) ticket_->Progress();
      status = assembler_->Add(chunk_);
      if (status.ok()) {
        StartRead(&chunk_);
        return;
      }
    } else if (context_->IsCancelled()) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the caller went away during PushSamples"));
      return;
    } else {
      auto samples = assembler_->Finish();
      status = samples.ok() ? service_.coordinator_.relay().Deposit(
                                  sender_, ref_.move_id, *std::move(samples))
                            : samples.status();
    }
    if (!status.ok()) {
      Refuse(status);
      return;
    }
    spdlog::info("round {}: data move {}: received {} samples from {}",
                 ref_.round, base::Printable(ref_.move_id), samples_, sender_);
    response_->set_received_samples(samples_);
    Finish(grpc::Status::OK);
  }

  void OnDone() override {
    canceller_->Detach();
    delete this;
  }

 private:
  void OnFirst(bool ok) {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "a sample stream must carry at least one chunk"));
      return;
    }
    ref_ = {chunk_.client_id(), chunk_.round(), chunk_.task_id(),
            chunk_.move_id()};
    if (grpc::Status ok =
            service_.Authorize(context_, "PushSamples", ref_.client_id);
        !ok.ok()) {
      Finish(ok);
      return;
    }
    RoundCoordinator& coordinator = service_.coordinator_;
    auto sender =
        coordinator.ClientNameForTask(ref_.client_id, ref_.round, ref_.task_id);
    // Checked before the stream is read: a retried push of samples already
    // here, or one the server would refuse, costs no transfer.
    absl::StatusOr<PlannedMove> move =
        sender.ok() ? coordinator.relay().MoveToDeposit(*sender, ref_.move_id)
                    : absl::StatusOr<PlannedMove>(sender.status());
    if (!move.ok()) {
      Refuse(move.status());
      return;
    }
    sender_ = *sender;
    samples_ = move->samples;
    assembler_.emplace(ref_, move->samples);
    OnReadDone(true);  // the first chunk carries samples too
  }

  void Refuse(const absl::Status& status) {
    if (!absl::IsAlreadyExists(status)) {
      spdlog::warn("refused the samples of data move {} from {}: {}",
                   base::Printable(ref_.move_id),
                   base::Printable(ref_.client_id),
                   std::string(status.message()));
    }
    Finish(wire::ToGrpcStatus(status));
  }

  FederationService& service_;
  grpc::CallbackServerContext* const context_;
  v1::PushSamplesResponse* const response_;
  std::shared_ptr<CallCanceller> canceller_;
  std::optional<StreamLimiter::Ticket> ticket_;
  v1::SampleChunk chunk_;
  runtime::SampleStreamRef ref_;
  std::string sender_;
  uint64_t samples_ = 0;
  std::optional<runtime::SampleAssembler> assembler_;
};

grpc::ServerReadReactor<v1::SampleChunk>* FederationService::PushSamples(
    grpc::CallbackServerContext* context, v1::PushSamplesResponse* response) {
  auto* push = new SamplePush(*this, context, response);
  push->Start();
  return push;
}

// One PullSamples call: waits for the move's sender without a thread (it
// looks again on a gRPC alarm, after 50 ms, then twice as long each time,
// at most 1 s), then sends the samples a chunk at a time. Deletes itself when
// gRPC is done with the call.
class FederationService::SamplePull final
    : public grpc::ServerWriteReactor<v1::SampleChunk> {
 public:
  SamplePull(FederationService& service, grpc::CallbackServerContext* context,
             const v1::PullSamplesRequest& request, std::string receiver,
             std::string caller, absl::Time deadline)
      : service_(service),
        context_(context),
        request_(request),
        receiver_(std::move(receiver)),
        caller_(std::move(caller)),
        deadline_(deadline),
        canceller_(std::make_shared<CallCanceller>(context)) {}

  // Takes the samples if they are here; else looks again shortly, until
  // the deadline.
  void TryTake() {
    auto samples = service_.coordinator_.relay().Take(
        receiver_, request_.move_id(), absl::InfinitePast());
    if (absl::IsDeadlineExceeded(samples.status()) &&
        service_.clock_.Now() < deadline_) {
      absl::MutexLock lock(&mu_);
      if (!cancelled_) {
        // A fresh alarm for each look (an alarm is set once); they go with
        // the call.
        alarms_.push_back(std::make_unique<grpc::Alarm>());
        alarms_.back()->Set(std::chrono::system_clock::now() + wait_,
                            [this](bool ok) {
                              if (ok && !context_->IsCancelled()) {
                                TryTake();
                              } else {
                                Finish(Gone());
                              }
                            });
        wait_ = std::min(2 * wait_, std::chrono::milliseconds(1000));
        return;
      }
    }
    if (context_->IsCancelled()) {
      Finish(Gone());
      return;
    }
    if (!samples.ok()) {
      Finish(wire::ToGrpcStatus(samples.status()));
      return;
    }
    if (grpc::Status admitted = AdmitInto(
            service_.streams_, caller_, "the sample pull", canceller_, ticket_);
        !admitted.ok()) {
      Finish(admitted);
      return;
    }
    samples_ = *std::move(samples);
    auto chunker = runtime::SampleChunker::Make(
        *samples_, {request_.client_id(), request_.round(), request_.task_id(),
                    request_.move_id()});
    if (!chunker.ok()) {
      Finish(wire::ToGrpcStatus(chunker.status()));
      return;
    }
    chunker_.emplace(*std::move(chunker));
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (ok) {
      if (ticket_) ticket_->Progress();
      WriteNext();
    } else {
      Finish(Gone());
    }
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    // A pending look ends the call (its callback gets ok = false).
    if (!alarms_.empty()) alarms_.back()->Cancel();
  }

  void OnDone() override {
    canceller_->Detach();
    delete this;
  }

 private:
  static grpc::Status Gone() {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the caller went away during PullSamples");
  }

  void WriteNext() {
    if (chunker_->Next(chunk_)) {
      StartWrite(&chunk_);
      return;
    }
    spdlog::info("round {}: data move {}: {} samples sent to {}",
                 request_.round(), base::Printable(request_.move_id()),
                 samples_->rows, receiver_);
    Finish(grpc::Status::OK);
  }

  FederationService& service_;
  grpc::CallbackServerContext* const context_;
  const v1::PullSamplesRequest request_;
  const std::string receiver_;
  const std::string caller_;  // whom its stream counts against
  const absl::Time deadline_;
  std::shared_ptr<CallCanceller> canceller_;
  std::optional<StreamLimiter::Ticket> ticket_;
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<grpc::Alarm>> alarms_ ABSL_GUARDED_BY(mu_);
  std::chrono::milliseconds wait_{50};  // doubles up to 1 s
  // The relay's samples, streamed from where they are.
  std::shared_ptr<const runtime::ImageDataset> samples_;
  std::optional<runtime::SampleChunker> chunker_;
  v1::SampleChunk chunk_;
};

grpc::ServerWriteReactor<v1::SampleChunk>* FederationService::PullSamples(
    grpc::CallbackServerContext* context,
    const v1::PullSamplesRequest* request) {
  using Stream = OutgoingStream<v1::SampleChunk>;
  std::string caller;
  if (grpc::Status ok =
          Authorize(context, "PullSamples", request->client_id(), &caller);
      !ok.ok()) {
    return Stream::Refused(ok);
  }
  auto receiver = coordinator_.ClientNameForTask(
      request->client_id(), request->round(), request->task_id());
  if (!receiver.ok()) {
    return Stream::Refused(wire::ToGrpcStatus(receiver.status()));
  }
  // Wait for the sender, but never past the caller's own deadline.
  const absl::Time deadline =
      clock_.Now() + PollBudget(context, coordinator_.data_move_wait());
  auto* pull = new SamplePull(*this, context, *request, *std::move(receiver),
                              std::move(caller), deadline);
  pull->TryTake();
  return pull;
}

}  // namespace fedberry::server
