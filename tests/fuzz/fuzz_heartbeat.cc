// Fuzzes Federation.Heartbeat with one serialized HeartbeatRequest.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::HeartbeatRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::HeartbeatResponse response;
  (void)f.stub().Heartbeat(&context, request, &response);
  f.CheckInvariants();
  return 0;
}
