// Fuzzes Federation.Join with one serialized JoinRequest.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::JoinRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::JoinResponse response;
  (void)f.stub().Join(&context, request, &response);
  f.CheckInvariants();
  return 0;
}
