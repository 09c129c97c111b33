#include "proto/wire.h"

#include <chrono>
#include <optional>

#include "absl/strings/cord.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace fedberry::wire {

grpc::ChannelArguments ClientChannelArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  // Long polls and training keep a channel idle for a while; keep it alive.
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Reconnect quickly after a server restart; the agent adds its own backoff.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5'000);
  return args;
}

void ConfigureServerBuilder(grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      kMinPingIntervalMs);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES,
                             kStreamWindowBytes);
}

std::shared_ptr<grpc::Channel> MakeClientChannel(const std::string& address) {
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   ClientChannelArguments());
}

namespace {

constexpr char kErrorInfoUrl[] = "type.googleapis.com/google.rpc.ErrorInfo";

}  // namespace

absl::Status WithReason(absl::Status status, absl::string_view reason) {
  google::rpc::ErrorInfo info;
  info.set_reason(std::string(reason));
  info.set_domain(kErrorDomain);
  status.SetPayload(kErrorInfoUrl, absl::Cord(info.SerializeAsString()));
  return status;
}

std::string ReasonOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrorInfoUrl);
  google::rpc::ErrorInfo info;
  if (!payload || !info.ParseFromString(std::string(*payload)) ||
      info.domain() != kErrorDomain) {
    return "";
  }
  return info.reason();
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message(status.message());
  auto info = status.GetPayload(kErrorInfoUrl);
  if (!info) return grpc::Status(code, message);
  google::rpc::Status details;
  details.set_code(static_cast<int>(status.code()));
  details.set_message(message);
  google::protobuf::Any* any = details.add_details();
  any->set_type_url(kErrorInfoUrl);
  any->set_value(std::string(*info));
  return grpc::Status(code, message, details.SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status out(static_cast<absl::StatusCode>(status.error_code()),
                   status.error_message());
  google::rpc::Status details;
  if (status.error_details().empty() ||
      !details.ParseFromString(status.error_details())) {
    return out;
  }
  for (const google::protobuf::Any& any : details.details()) {
    google::rpc::ErrorInfo info;
    if (any.type_url() == kErrorInfoUrl && any.UnpackTo(&info) &&
        info.domain() == kErrorDomain) {
      return WithReason(std::move(out), info.reason());
    }
  }
  return out;
}

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(timeout));
}

bool HasPushTurn(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  auto it = metadata.find(kPushTurnMetadata);
  return it != metadata.end() && it->second == kPushTurnGo;
}

void AddClientId(grpc::ClientContext& context, const std::string& client_id) {
  context.AddMetadata(kClientIdMetadata, client_id);
}

std::string ClientIdOf(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kClientIdMetadata);
  if (it == metadata.end() || it->second.size() > 128) return "";
  return std::string(it->second.data(), it->second.size());
}

}  // namespace fedberry::wire
