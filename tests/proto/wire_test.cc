#include "proto/wire.h"

#include <gtest/gtest.h>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace fedberry::wire::wire_test {
namespace {

TEST(Wire, AReasonCrossesTheWireAsStandardErrorDetails) {
  const absl::Status refused = WithReason(
      absl::FailedPreconditionError("late update: round 3 closed"),
      kReasonLateUpdate);
  EXPECT_EQ(ReasonOf(refused), kReasonLateUpdate);
  const grpc::Status sent = ToGrpcStatus(refused);
  EXPECT_EQ(sent.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(sent.error_message(), "late update: round 3 closed");
  // What any gRPC tool reads from grpc-status-details-bin.
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(sent.error_details()));
  EXPECT_EQ(details.code(), 9);
  ASSERT_EQ(details.details_size(), 1);
  google::rpc::ErrorInfo info;
  ASSERT_TRUE(details.details(0).UnpackTo(&info));
  EXPECT_EQ(info.reason(), "LATE_UPDATE");
  EXPECT_EQ(info.domain(), "fedberry.v1");

  const absl::Status received = FromGrpcStatus(sent);
  EXPECT_EQ(received.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(received.message(), "late update: round 3 closed");
  EXPECT_EQ(ReasonOf(received), kReasonLateUpdate);
}

TEST(Wire, AMessageIsNeverTakenForAReason) {
  // The old protocol: a reason spelled at the start of the message.
  const absl::Status text = absl::FailedPreconditionError(
      "LATE_UPDATE: a message that only looks like a reason");
  EXPECT_EQ(ReasonOf(FromGrpcStatus(ToGrpcStatus(text))), "");
  EXPECT_TRUE(ToGrpcStatus(text).error_details().empty());
}

TEST(Wire, ForeignOrBrokenDetailsAreIgnored) {
  google::rpc::Status other;
  other.set_code(9);
  google::rpc::ErrorInfo info;
  info.set_reason("LATE_UPDATE");
  info.set_domain("example.com");  // another service's reason
  other.add_details()->PackFrom(info);
  const grpc::Status foreign(grpc::StatusCode::FAILED_PRECONDITION, "x",
                             other.SerializeAsString());
  EXPECT_EQ(ReasonOf(FromGrpcStatus(foreign)), "");
  const grpc::Status broken(grpc::StatusCode::FAILED_PRECONDITION, "x",
                            std::string("\xff\xff\xff", 3));
  const absl::Status parsed = FromGrpcStatus(broken);
  EXPECT_EQ(parsed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReasonOf(parsed), "");
}

}  // namespace
}  // namespace fedberry::wire::wire_test
