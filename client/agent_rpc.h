// Call helpers the device agent's parts share (client_agent.cc,
// agent_data_moves.cc, agent_reports.cc): which failures are worth another
// attempt, and reading a server stream.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_AGENT_RPC_H_
#define FEDBERRY_CLIENT_AGENT_RPC_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "proto/wire.h"

namespace fedberry::client {

// A failure of the server or the network, not of the request: asking again
// later may work.
inline bool IsTransient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) ||
         absl::IsResourceExhausted(s) || absl::IsAborted(s);
}

// Reads a server stream, handing each chunk to `add` and cancelling the
// call at the first one it refuses. The decoder's error comes first, else
// the call's own status.
template <typename Chunk, typename Add>
absl::Status ReadStream(grpc::ClientContext& context,
                        grpc::ClientReaderInterface<Chunk>& reader, Add add) {
  Chunk chunk;
  absl::Status decoded;
  while (reader.Read(&chunk)) {
    if (decoded.ok()) decoded = add(chunk);
    if (!decoded.ok()) context.TryCancel();
  }
  absl::Status s = wire::FromGrpcStatus(reader.Finish());
  return decoded.ok() ? s : decoded;
}

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_AGENT_RPC_H_
