// fedberry-client's flag table (client_flags.inc) as rows over ClientConfig
// (base/flag_table.h). Each flag is named once, in its row; its definition
// (client_flags.cc), its reading (ClientConfigFromFlags), its writing
// (ClientArgsFrom), --help and docs/guide/flags.md (checked by
// tests/apps/flag_docs_test.cc) come from that row. No flags are defined
// here and no LibTorch is needed.
// Thread-safety: the tables are made once, on first use, and never change.
#ifndef FEDBERRY_CLIENT_CLIENT_FLAG_TABLE_H_
#define FEDBERRY_CLIENT_CLIENT_FLAG_TABLE_H_

#include "base/flag_table.h"
#include "client/client_config.h"

namespace fedberry::client {

// fedberry-client's usage message: the start of its --help and the
// synopsis of its man page.
inline constexpr char kClientUsage[] =
    "fedberry device agent: fetches the job's training plan, trains on "
    "this board's data and sends model updates to the server.\nUsage: "
    "fedberry-client --server=gateway:50051 --tls_ca=fleet-ca.crt "
    "--tls_cert=board-3.crt --tls_key=board-3.key --data=csv:rows.csv\n      "
    " fedberry-client --server=gateway:50051 "
    "--partition_index=0 --partition_count=4";

// Every row of client_flags.inc, in its order.
const base::FlagTable<ClientConfig>& ClientFlagTable();

// The rows read whatever runs (FEDBERRY_FLAG), in the table's order.
const base::FlagTable<ClientConfig>& AgentFlagTable();

// The watchdog's levels and holds (FEDBERRY_WATCHDOG_FLAG), read only when
// the watchdog or the supervisor runs.
const base::FlagTable<ClientConfig>& WatchdogFlagTable();

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_FLAG_TABLE_H_
