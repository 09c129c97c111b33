// Fuzzes Federation.PullModelFile with one serialized PullModelFileRequest
// and reads the whole stream: only the plan's file is ever served, whole and
// in order.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::PullModelFileRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  auto reader = f.stub().PullModelFile(&context, request);
  fedberry::v1::ModelFileChunk chunk;
  std::string file;
  bool in_order = true;
  while (reader->Read(&chunk)) {
    in_order = in_order && chunk.offset() == file.size() &&
               chunk.total_bytes() == f.model_file().size();
    file += chunk.data();
  }
  if (reader->Finish().ok() &&
      (request.model_sha256() != f.plan().model_sha256() || !in_order ||
       file != f.model_file())) {
    std::fprintf(stderr,
                 "fuzz: PullModelFile served something other than the "
                 "plan's file, whole and in order\n");
    std::abort();
  }
  f.CheckInvariants();
  return 0;
}
