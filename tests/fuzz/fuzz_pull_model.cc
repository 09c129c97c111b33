// Fuzzes Federation.PullModel with one serialized PullModelRequest and reads
// the whole stream.
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::PullModelRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  f.Refresh();
  uint64_t round = request.round();
  f.Fill(request.mutable_client_id(), request.mutable_task_id(), &round);
  request.set_round(round);
  grpc::ClientContext context;
  f.SetDeadline(context);
  auto reader = f.stub().PullModel(&context, request);
  fedberry::v1::ModelChunk chunk;
  while (reader->Read(&chunk)) {
  }
  (void)reader->Finish();
  f.CheckInvariants();
  return 0;
}
