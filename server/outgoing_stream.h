// Server-streaming calls on gRPC's callback API: a reactor sends what a
// producer makes, one message at a time, and holds no thread while the
// caller reads. A model stream to a slow board costs its buffers, not a
// thread.
#ifndef FEDBERRY_SERVER_OUTGOING_STREAM_H_
#define FEDBERRY_SERVER_OUTGOING_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "proto/wire.h"
#include "server/stream_limiter.h"

namespace fedberry::server {

// Lets a StreamLimiter cancel a callback call that may end meanwhile: the
// call's reactor detaches it when gRPC is done with the call (OnDone), and
// cancelling after that does nothing. Thread-safe.
class CallCanceller {
 public:
  explicit CallCanceller(grpc::ServerContextBase* context)
      : context_(context) {}

  void Cancel() {
    absl::MutexLock lock(&mu_);
    if (context_ != nullptr) context_->TryCancel();
  }
  void Detach() {
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
  }
  // For StreamLimiter::Admit.
  static std::function<void()> CallbackOf(
      const std::shared_ptr<CallCanceller>& canceller) {
    return [canceller] { canceller->Cancel(); };
  }

 private:
  absl::Mutex mu_;
  grpc::ServerContextBase* context_ ABSL_GUARDED_BY(mu_);
};

// Sends each message `next` fills until it returns false, then OK. A caller
// that stops reading, or a cancelled call, ends it CANCELLED. Holds its
// limiter ticket until gRPC is done with the call. Deletes itself.
template <typename Message>
class OutgoingStream final : public grpc::ServerWriteReactor<Message> {
 public:
  using Next = std::function<bool(Message&)>;

  // A call refused before it streams.
  static OutgoingStream* Refused(const grpc::Status& status) {
    auto* stream = new OutgoingStream(nullptr, nullptr, "");
    stream->Finish(status);
    return stream;
  }

  // Sends once `limiter` (may be null: no limit) admits the stream: at once
  // when a place is free, else when one frees up, the caller waiting
  // without a thread; refused (ResourceExhausted) when too many wait
  // already. `what` names the stream in its cancellation, `who` to the
  // limiter, `caller` whom its per-caller bound counts. A caller that goes
  // away while it waits leaves the queue.
  static OutgoingStream* StartInTurn(Next next, StreamLimiter* limiter,
                                     grpc::ServerContextBase* context,
                                     std::string what, std::string who,
                                     std::string caller) {
    auto canceller = std::make_shared<CallCanceller>(context);
    auto* stream =
        new OutgoingStream(std::move(next), canceller, std::move(what));
    if (limiter == nullptr) {
      stream->WriteNext();
      return stream;
    }
    absl::StatusOr<bool> now =
        stream->turn_.Request(*limiter, std::move(who), std::move(caller),
                              CallCanceller::CallbackOf(canceller),
                              [stream] { stream->WriteNext(); });
    // gRPC may be done with the call, and delete the stream, as soon as it
    // finishes.
    if (!now.ok()) {
      stream->Finish(wire::ToGrpcStatus(now.status()));
    } else if (*now) {
      stream->WriteNext();
    }
    return stream;
  }

  void OnCancel() override {
    // Admitted meanwhile: its writes fail, which ends the call.
    if (turn_.Withdraw()) {
      this->Finish(
          grpc::Status(grpc::StatusCode::CANCELLED,
                       "the caller went away while waiting for " + what_));
    }
  }

  void OnWriteDone(bool ok) override {
    if (ok) {
      turn_.Progress();
      WriteNext();
    } else {
      this->Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                                "the caller went away during " + what_));
    }
  }

  void OnDone() override {
    if (canceller_) canceller_->Detach();
    delete this;
  }

 private:
  OutgoingStream(Next next, std::shared_ptr<CallCanceller> canceller,
                 std::string what)
      : next_(std::move(next)),
        canceller_(std::move(canceller)),
        what_(std::move(what)) {}

  void WriteNext() {
    if (next_(message_)) {
      this->StartWrite(&message_);
    } else {
      this->Finish(grpc::Status::OK);
    }
  }

  Next next_;
  StreamTurn turn_;  // its place, once StartInTurn asked for one
  std::shared_ptr<CallCanceller> canceller_;
  const std::string what_;
  Message message_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_OUTGOING_STREAM_H_
