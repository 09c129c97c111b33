// Fuzzes Federation.SecAggStep with one serialized SecAggRequest against a
// server whose rounds are securely aggregated: the seed board's id, task
// and session stand in for the placeholders, so mutated keys, share boxes,
// masked inputs, unmask shares and waits reach the open session.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::GetSecAgg();
  fedberry::v1::SecAggRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::SecAggResponse response;
  (void)f.stub().SecAggStep(&context, request, &response);
  f.CheckInvariants();
  return 0;
}
