// Fuzzes Federation.PullSamples with one serialized PullSamplesRequest and
// reads the whole stream.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::PullSamplesRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  auto reader = f.stub().PullSamples(&context, request);
  fedberry::fuzz::Drain<fedberry::v1::SampleChunk>(reader);
  f.CheckInvariants();
  return 0;
}
