// fedberry-server's own flags (the rows of its table, server_flags.inc, that
// fedberry-sim does not share; defined in server_flags.cc) and the one place
// the server's flags, its own and those it shares with fedberry-sim, are
// read: into a ServerConfig.
// Thread-safety: call after the command line is parsed, from main's thread.
#ifndef FEDBERRY_APPS_SERVER_SERVER_FLAGS_H_
#define FEDBERRY_APPS_SERVER_SERVER_FLAGS_H_

#include "absl/status/statusor.h"
#include "apps/server/server_config.h"

namespace fedberry::apps {

// Part of the table's path (server_flags.inc), for ParseCommandLine's
// --help.
inline constexpr char kServerFlagsFile[] = "apps/server/server_flags";

// The flags as they are; the checks come when the server starts
// (server_checks.h), after the plan, as they always did. Internal when this
// program does not define every flag of the table (it must link server_app).
absl::StatusOr<ServerConfig> ServerConfigFromFlags();

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_FLAGS_H_
