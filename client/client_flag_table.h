// fedberry-client's flag table (base/flag_table.h): part 1,
// client_flags.inc, rows over ClientConfig; part 2,
// client_flags_watchdog.inc, the watchdog's levels, rows over
// runtime::WatchdogOptions (ClientConfig::watchdog_options), read only when
// the watchdog or the supervisor runs. Each flag is named once, in its row;
// its definition (client_flags.cc), its reading (ClientConfigFromFlags), its
// writing (ClientArgsFrom), --help, the man page and docs/guide/flags.md all
// come from that row. No flags are defined here and no LibTorch is needed.
// Thread-safety: the tables are made once, on first use, and never change.
#ifndef FEDBERRY_CLIENT_CLIENT_FLAG_TABLE_H_
#define FEDBERRY_CLIENT_CLIENT_FLAG_TABLE_H_

#include "base/flag_table.h"
#include "client/client_config.h"
#include "runtime/watchdog.h"

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

// Part 1: the rows of client_flags.inc.
const base::FlagTable<ClientConfig>& ClientFlagTable();

// Part 2: the rows of client_flags_watchdog.inc.
const base::FlagTable<runtime::WatchdogOptions>& WatchdogFlagTable();

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_FLAG_TABLE_H_
