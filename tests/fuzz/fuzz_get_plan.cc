// Fuzzes Federation.GetPlan with one serialized GetPlanRequest: whatever the
// request, an answer is the served plan.
#include <cstdio>
#include <cstdlib>

#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/federation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& f = fedberry::fuzz::FuzzFederation::Get();
  fedberry::v1::GetPlanRequest request;
  if (!f.ParseRequest(data, size, request)) return -1;
  grpc::ClientContext context;
  f.SetDeadline(context);
  fedberry::v1::GetPlanResponse response;
  if (f.stub().GetPlan(&context, request, &response).ok() &&
      !google::protobuf::util::MessageDifferencer::Equals(response.plan(),
                                                          f.plan())) {
    std::fprintf(stderr, "fuzz: GetPlan answered another plan\n");
    std::abort();
  }
  f.CheckInvariants();
  return 0;
}
