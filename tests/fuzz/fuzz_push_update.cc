// Fuzzes Federation.PushUpdate with a stream of length-delimited
// UpdateChunks, in whatever order and number the input says.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  auto stream = f.ParseStream<fedberry::v1::UpdateChunk>(data, size);
  if (stream.empty()) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::PushUpdateResponse response;
  auto writer = f.stub().PushUpdate(&context, &response);
  fedberry::fuzz::Send(writer, stream);
  f.CheckInvariants();
  return 0;
}
