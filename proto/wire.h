// Settings both ends of the fedberry wire must agree on, and the one place
// where absl::Status and grpc::Status are converted.
//
// Keepalive: the client pings every kKeepaliveTime; the server accepts pings
// that often (kMinPingInterval <= kKeepaliveTime), so it never answers a
// well-behaved client with GOAWAY "too_many_pings".
//
// Message sizes: models move as chunks of at most kChunkBytes, so the receive
// limit is a chunk plus headroom, not a 2 GB cap a hostile peer could use to
// exhaust a 1 GB board. Thread-safe: everything here is pure.
#ifndef FEDBERRY_PROTO_WIRE_H_
#define FEDBERRY_PROTO_WIRE_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/chunking.h"

namespace fedberry::wire {

// Largest message either end accepts: a chunk plus protobuf framing and spec.
inline constexpr int kMaxMessageBytes = kChunkBytes + (64 << 10);
// What the server buffers of one incoming stream before its handler reads
// it (gRPC's per-stream receive window, with its bandwidth probe off, which
// would grow it to megabytes): a push that is refused, or not yet read,
// costs at most this much of the server's memory, whatever the model.
inline constexpr int kStreamWindowBytes = 256 << 10;
inline constexpr int kKeepaliveTimeMs = 20'000;
inline constexpr int kKeepaliveTimeoutMs = 10'000;
inline constexpr int kMinPingIntervalMs = 10'000;
// Why a call was refused, when the caller acts on it: a google.rpc.ErrorInfo
// reason in `kErrorDomain`, carried in gRPC's error details (the
// grpc-status-details-bin trailer, a google.rpc.Status), never parsed out
// of the message, which is for people.
inline constexpr char kErrorDomain[] = "fedberry.v1";
// FailedPrecondition: the sender's data-move samples are not on the server
// (it restarted); the client hands them over again and resends the update.
inline constexpr char kReasonSamplesMissing[] = "SAMPLES_MISSING";
// FailedPrecondition: the update came after its round closed (it had the
// updates it needed, or its deadline passed); the board waits for its next
// task, it neither retries nor backs off.
inline constexpr char kReasonLateUpdate[] = "LATE_UPDATE";
// FailedPrecondition: an asynchronous round's update trained on a model
// more than --max_staleness versions old; not counted. The board asks for
// a task (the latest model) at once, without backing off.
inline constexpr char kReasonStaleUpdate[] = "STALE_UPDATE";
// FailedPrecondition at Join: the client is older than the job's
// --min_client_version; it says so and asks again later (after an
// upgrade, its service restarts with the new release).
inline constexpr char kReasonClientTooOld[] = "CLIENT_TOO_OLD";
// FailedPrecondition at Join: the declared sample count is more than
// --max_samples_ratio times the median of the boards taking part; the
// board says so and asks again later (the median moves as boards join).
inline constexpr char kReasonSamplesAboveFleet[] = "SAMPLES_ABOVE_FLEET";

// `status` with `reason` (an ErrorInfo in kErrorDomain) attached as its
// payload; ToGrpcStatus sends it, FromGrpcStatus restores it.
absl::Status WithReason(absl::Status status, absl::string_view reason);
// The reason attached to `status`, or empty.
std::string ReasonOf(const absl::Status& status);

// A PushUpdate's turn: the server sends this key with kPushTurnGo in its
// initial metadata when the board may send its update's chunks. A push
// that waits for its turn hears nothing yet; one that is refused (busy,
// late, refused for its header) ends with a status and no go-ahead.
inline constexpr char kPushTurnMetadata[] = "fedberry-push-turn";
inline constexpr char kPushTurnGo[] = "go";
// True when `metadata` (a call's server initial metadata) carries the
// go-ahead.
bool HasPushTurn(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata);

// Channel arguments for a client's channel to the server.
grpc::ChannelArguments ClientChannelArguments();

// Applies the matching receive limits and keepalive policy to a server.
void ConfigureServerBuilder(grpc::ServerBuilder& builder);

// Opens an insecure channel to `address` with ClientChannelArguments().
std::shared_ptr<grpc::Channel> MakeClientChannel(const std::string& address);

// Canonical codes map 1:1 between Abseil and gRPC; a WithReason reason
// travels as error details.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// Sets `context`'s deadline `timeout` from now.
void SetDeadline(grpc::ClientContext& context, absl::Duration timeout);

// A board names its client id in a PushUpdate call's metadata too, so a
// push refused as busy before its header is read still tells the server
// which board is alive. A hint for liveness only: the header's id, checked
// against the caller, is what counts.
inline constexpr char kClientIdMetadata[] = "fedberry-client-id";
void AddClientId(grpc::ClientContext& context, const std::string& client_id);
// The id a call's metadata names; empty when none, or one longer than any
// id the server hands out (128 bytes).
std::string ClientIdOf(const grpc::ServerContextBase& context);

}  // namespace fedberry::wire

#endif  // FEDBERRY_PROTO_WIRE_H_
