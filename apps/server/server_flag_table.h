// fedberry-server's flag table as rows over ServerConfig (base/flag_table.h):
// part 1, server_flags_shared.inc, the flags fedberry-sim shares and passes
// through; part 2, server_flags.inc, the server's own. Each flag is named
// once, in its row; its definition (server_flags_shared.cc,
// server_flags.cc), its reading (ServerConfigFromFlags,
// ReadSharedServerFlags), its writing (ServerArgsFrom), --help, the man page
// and docs/guide/flags.md all come from that row. No flags are defined here
// and no LibTorch is needed.
// Thread-safety: the tables are made once, on first use, and never change.
#ifndef FEDBERRY_APPS_SERVER_SERVER_FLAG_TABLE_H_
#define FEDBERRY_APPS_SERVER_SERVER_FLAG_TABLE_H_

#include "apps/server/server_config.h"
#include "base/flag_table.h"

namespace fedberry::apps {

// fedberry-server's usage message: the start of its --help and the
// synopsis of its man page.
inline constexpr char kServerUsage[] =
    "fedberry aggregation server: runs FedAvg rounds for clients that dial "
    "in, training a built-in model or the user's TorchScript file.\n"
    "Usage: fedberry-server --listen=0.0.0.0:50051 --tls_cert=server.crt "
    "--tls_key=server.key --client_ca=fleet-ca.crt --rounds=5 "
    "--output=out\n"
    "       fedberry-server --model=model.pt --eval_data=csv:test.csv "
    "--label_column=target --optimizer=adam --lr=0.01 ...\n"
    "       fedberry-server --upstream=central:50051 --listen=0.0.0.0:50051 "
    "...   (a site gateway of a parent server)";

// Part 1: the rows of server_flags_shared.inc.
const base::FlagTable<ServerConfig>& SharedServerFlagTable();

// The whole table: part 1's rows, then server_flags.inc's.
const base::FlagTable<ServerConfig>& ServerFlagTable();

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_FLAG_TABLE_H_
