// The service's update pushes: PushUpdate's reactor (UpdatePush), which
// checks the header, waits its turn among --max_inflight_updates, reads the
// update into staging tensors a chunk at a time and submits it whole; and
// how a refused update is logged and counted.
// Thread-safety: see federation_service.h.
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/log_text.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"
#include "server/outgoing_stream.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

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

}  // namespace fedberry::server
