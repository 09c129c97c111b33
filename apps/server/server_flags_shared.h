// The flags fedberry-server shares with fedberry-sim (the
// FEDBERRY_SHARED_FLAG rows of the server's table, server_flags.inc; defined
// in server_flags_shared.cc, linked by both): the job's settings the simulator
// passes through to the server it starts. ServerConfigFromFlags reads them with
// the server's own; fedberry-sim reads them into its plan's ServerConfig and
// gives them back as flags (server_args.h). Thread-safety: call after the
// command line is parsed, from main's thread.
#ifndef FEDBERRY_APPS_SERVER_SERVER_FLAGS_SHARED_H_
#define FEDBERRY_APPS_SERVER_SERVER_FLAGS_SHARED_H_

#include "absl/status/status.h"
#include "apps/server/server_config.h"

namespace fedberry::apps {

// Part of the table's path, for ParseCommandLine's --help: in fedberry-sim,
// which does not link server_flags.cc, only the shared rows are defined
// there.
inline constexpr char kServerSharedFlagsFile[] = "apps/server/server_flags";

// Sets the fields of `config` the shared rows name and leaves the rest.
// Internal when this program does not define them (it must link
// server_config).
absl::Status ReadSharedServerFlags(ServerConfig& config);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_FLAGS_SHARED_H_
