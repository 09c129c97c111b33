// What the service's RPC families share in how they treat a call: a unary
// call answered at once, a wait bounded by the caller's own deadline, and a
// stream admitted into its StreamLimiter under a name the limiter's log
// shows. The families themselves are in join_rpcs.cc, task_rpcs.cc,
// pull_rpcs.cc, push_rpcs.cc, evaluation_rpcs.cc and data_move_rpcs.cc.
// Thread-safety: pure functions (AdmitInto's limiter is thread-safe).
#ifndef FEDBERRY_SERVER_SERVICE_CALL_HELPERS_H_
#define FEDBERRY_SERVER_SERVICE_CALL_HELPERS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "server/outgoing_stream.h"
#include "server/stream_limiter.h"

namespace fedberry::server {

// Finishes a unary callback call with `status` and returns its reactor.
grpc::ServerUnaryReactor* AnswerNow(grpc::CallbackServerContext* context,
                                    const grpc::Status& status);

// How long a call may wait (a long poll, a sample pull waiting for its
// sender): at most `max`, and never past the caller's own deadline (less
// 500 ms to answer in); zero when that is already past.
absl::Duration PollBudget(grpc::ServerContextBase* context, absl::Duration max);

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
