// Fuzzes Federation.GetTask with one serialized GetTaskRequest.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::GetTaskRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  f.Refresh();
  f.Fill(request.mutable_client_id(), nullptr, nullptr);
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::GetTaskResponse response;
  (void)f.stub().GetTask(&context, request, &response);
  f.CheckInvariants();
  return 0;
}
