// fedberry-server's flag table (server_flags.inc) as rows over ServerConfig
// (base/flag_table.h). Each flag is named once, in its row; its definition
// (server_flags_shared.cc for the rows fedberry-sim shares, server_flags.cc
// for the rest), its reading (ServerConfigFromFlags, ReadSharedServerFlags),
// its writing (ServerArgsFrom), --help and docs/guide/flags.md (checked by
// tests/apps/flag_docs_test.cc) come from that row. No flags are defined
// here and no LibTorch is needed.
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

// The rows fedberry-sim shares (FEDBERRY_SHARED_FLAG), in the table's order.
const base::FlagTable<ServerConfig>& SharedServerFlagTable();

// Every row of server_flags.inc, in its order.
const base::FlagTable<ServerConfig>& ServerFlagTable();

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_FLAG_TABLE_H_
