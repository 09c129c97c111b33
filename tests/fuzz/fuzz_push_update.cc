// Fuzzes Federation.PushUpdate with a stream of length-delimited
// UpdateChunks (a header, then model chunks, in any order the input says).
#include "tests/fuzz/federation_fuzz.h"

using fedberry::v1::UpdateChunk;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  std::vector<UpdateChunk> stream =
      fedberry::fuzz::ReadDelimited<UpdateChunk>(data, size);
  if (stream.empty()) return -1;
  f.Refresh();
  for (UpdateChunk& m : stream) {
    if (m.has_header()) {
      auto* h = m.mutable_header();
      uint64_t round = h->round();
      f.Fill(h->mutable_client_id(), h->mutable_task_id(), &round);
      h->set_round(round);
    } else if (m.has_chunk()) {
      auto* c = m.mutable_chunk();
      uint64_t round = c->round();
      f.Fill(nullptr, c->mutable_task_id(), &round);
      c->set_round(round);
    }
  }
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::PushUpdateResponse response;
  auto writer = f.stub().PushUpdate(&context, &response);
  for (const UpdateChunk& m : stream) {
    if (!writer->Write(m)) break;
  }
  writer->WritesDone();
  (void)writer->Finish();
  f.CheckInvariants();
  return 0;
}
