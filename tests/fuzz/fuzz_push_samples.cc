// Fuzzes Federation.PushSamples with a stream of length-delimited
// SampleChunks.
#include "tests/fuzz/federation_fuzz.h"

using fedberry::v1::SampleChunk;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  std::vector<SampleChunk> stream =
      fedberry::fuzz::ReadDelimited<SampleChunk>(data, size);
  if (stream.empty()) return -1;
  f.Refresh();
  for (SampleChunk& c : stream) {
    uint64_t round = c.round();
    f.Fill(c.mutable_client_id(), c.mutable_task_id(), &round);
    c.set_round(round);
  }
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::PushSamplesResponse response;
  auto writer = f.stub().PushSamples(&context, &response);
  for (const SampleChunk& c : stream) {
    if (!writer->Write(c)) break;
  }
  writer->WritesDone();
  (void)writer->Finish();
  f.CheckInvariants();
  return 0;
}
