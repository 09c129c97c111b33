// fedberry-client: the device agent that trains on this board's data. The
// program is client/run_client.h's; its flags are client/client_flags.cc's.
#include "client/client_flags.h"
#include "client/run_client.h"

int main(int argc, char** argv) {
  return fedberry::client::ClientMain(
      argc, argv,
      "fedberry device agent: fetches the job's training plan, trains on "
      "this board's data and sends model updates to the server.\nUsage: "
      "fedberry-client --server=gateway:50051 --tls_ca=fleet-ca.crt "
      "--tls_cert=board-3.crt --tls_key=board-3.key --data=csv:rows.csv\n      "
      " fedberry-client --server=gateway:50051 "
      "--partition_index=0 --partition_count=4",
      fedberry::client::kClientFlagsFile, /*decorators=*/nullptr);
}
