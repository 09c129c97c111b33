// Gives a clear refusal where gRPC's own would be empty: a request whose
// bytes do not decode as the method's message is refused by gRPC before any
// handler runs, with INTERNAL (UNIMPLEMENTED for a callback method) and
// no message at all. This server
// interceptor rewrites that status to INVALID_ARGUMENT naming the method,
// and logs the peer. Statuses with a message (every refusal of ours) pass
// unchanged. A path that is no method of fedberry.v1.Federation stays
// UNIMPLEMENTED, with a message saying what the server serves.
// Thread-safe: one interceptor per call.
#ifndef FEDBERRY_SERVER_DECODE_FAILURE_INTERCEPTOR_H_
#define FEDBERRY_SERVER_DECODE_FAILURE_INTERCEPTOR_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <vector>

namespace fedberry::server {

// The factories to pass to ServerBuilder::experimental()
// .SetInterceptorCreators().
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
DecodeFailureInterceptors();

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_DECODE_FAILURE_INTERCEPTOR_H_
