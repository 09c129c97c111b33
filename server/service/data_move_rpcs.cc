// The service's data moves (--data_moves): PushSamples, a sender's samples
// into the coordinator's SampleRelay (SamplePush), and PullSamples, a
// receiver's samples out of it once its sender has sent them (SamplePull,
// which looks again on gRPC alarms instead of holding a thread).
// Thread-safety: see federation_service.h.
#include <grpcpp/alarm.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/log_text.h"
#include "proto/wire.h"
#include "runtime/sample_codec.h"
#include "server/outgoing_stream.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

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
