// Fuzzes Federation.GetTask with one serialized GetTaskRequest.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::GetTaskRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::GetTaskResponse response;
  (void)f.stub().GetTask(&context, request, &response);
  f.CheckInvariants();
  return 0;
}
