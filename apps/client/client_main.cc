// fedberry-client: the device agent that trains on this board's data. The
// program is client/run_client.h's; its flags are its table's
// (client/client_flag_table.h).
#include "client/client_flag_table.h"
#include "client/client_flags.h"
#include "client/run_client.h"

int main(int argc, char** argv) {
  return fedberry::client::ClientMain(argc, argv,
                                      fedberry::client::kClientUsage,
                                      fedberry::client::kClientFlagsFile,
                                      /*decorators=*/nullptr);
}
