// What the service's RPC families share in how they treat a call: a unary
// call answered at once, a wait bounded by the caller's own deadline, a
// long poll parked in the coordinator (LongPollCall), and a stream
// admitted into its StreamLimiter under a name the limiter's log shows. The
// families themselves are in join_rpcs.cc, task_rpcs.cc, pull_rpcs.cc,
// push_rpcs.cc, evaluation_rpcs.cc and data_move_rpcs.cc. Thread-safety: pure
// functions (AdmitInto's limiter is thread-safe).
#ifndef FEDBERRY_SERVER_SERVICE_CALL_HELPERS_H_
#define FEDBERRY_SERVER_SERVICE_CALL_HELPERS_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/wire.h"
#include "server/outgoing_stream.h"
#include "server/round_coordinator.h"
#include "server/stream_limiter.h"

namespace fedberry::server {

// Finishes a unary callback call with `status` and returns its reactor.
grpc::ServerUnaryReactor* AnswerNow(grpc::CallbackServerContext* context,
                                    const grpc::Status& status);

// How long a call may wait (a long poll, a sample pull waiting for its
// sender): at most `max`, and never past the caller's own deadline (less
// 500 ms to answer in); zero when that is already past.
absl::Duration PollBudget(grpc::ServerContextBase* context, absl::Duration max);

// One long-polled unary call (GetTask, SecAggStep's waits): answered at
// once, or parked in the coordinator until an event or its deadline; a
// caller that goes away takes its poll back. Deletes itself when gRPC is
// done with the call.
template <typename Response>
class LongPollCall final : public grpc::ServerUnaryReactor {
 public:
  using Answer = std::function<void(absl::StatusOr<Response>)>;
  // Answers now, or parks `answer` and sets the poll's id (the
  // coordinator's Poll* methods).
  using Poll = std::function<std::optional<absl::StatusOr<Response>>(
      Answer answer, uint64_t& poll_id)>;

  // `method` names the call in a cancellation's status.
  LongPollCall(RoundCoordinator& coordinator, Response* response,
               const char* method)
      : coordinator_(coordinator), response_(response), method_(method) {}

  void Start(const Poll& poll) {
    absl::MutexLock lock(&mu_);  // an early answer waits for poll_id_
    auto now = poll(
        [this](absl::StatusOr<Response> r) {
          { absl::MutexLock lock(&mu_); }
          Reply(std::move(r));
        },
        poll_id_);
    if (now) Reply(*std::move(now));
  }

  void OnCancel() override {
    uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = poll_id_;
    }
    if (id != 0 && coordinator_.CancelTaskPoll(id)) {
      Finish(
          grpc::Status(grpc::StatusCode::CANCELLED,
                       std::string("the caller went away during ") + method_));
    }
  }

  void OnDone() override { delete this; }

 private:
  void Reply(absl::StatusOr<Response> r) {
    if (!r.ok()) {
      Finish(wire::ToGrpcStatus(r.status()));
      return;
    }
    *response_ = *std::move(r);
    Finish(grpc::Status::OK);
  }

  RoundCoordinator& coordinator_;
  Response* const response_;
  const char* const method_;
  absl::Mutex mu_;
  uint64_t poll_id_ ABSL_GUARDED_BY(mu_) = 0;
};

// A stream as the limiter's log names it: what, and whose (`caller`, from
// FederationService::Authorize).
std::string StreamName(const char* what, const std::string& caller);

// Admits a stream into `streams` (null: no limit) for a reactor that keeps
// its ticket in `into` until gRPC is done with the call: a stalled one is
// cancelled through `canceller` at the limiter's deadline. OK, or the
// status to finish with when too many run.
grpc::Status AdmitInto(StreamLimiter* streams, const std::string& caller,
                       const char* what,
                       const std::shared_ptr<CallCanceller>& canceller,
                       std::optional<StreamLimiter::Ticket>& into);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_SERVICE_CALL_HELPERS_H_
