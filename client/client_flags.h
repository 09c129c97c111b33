// fedberry-client's flags (its table, client_flag_table.h; defined in
// client_flags.cc) and the one place they are read: into a ClientConfig. A
// binary that adds flags of its own (sim/emulated_client_main.cc) links these
// too, so the two accept the same command line. Thread-safety: call after the
// command line is parsed, from main's thread.
#ifndef FEDBERRY_CLIENT_CLIENT_FLAGS_H_
#define FEDBERRY_CLIENT_CLIENT_FLAGS_H_

#include "absl/status/statusor.h"
#include "client/client_config.h"

namespace fedberry::client {

// Part of the table's path (client_flags.inc), for ParseCommandLine's
// --help.
inline constexpr char kClientFlagsFile[] = "client/client_flags";

// The parsed flags. InvalidArgument naming the flag that is wrong; Internal
// when this program does not define every flag of the table (it must link
// client_app).
absl::StatusOr<ClientConfig> ClientConfigFromFlags();

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_FLAGS_H_
