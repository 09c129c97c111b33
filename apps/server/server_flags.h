// fedberry-server's flags (defined in server_flags.cc) and the one place
// they are read: into a ServerConfig.
// Thread-safety: call after the command line is parsed, from main's thread.
#ifndef FEDBERRY_APPS_SERVER_SERVER_FLAGS_H_
#define FEDBERRY_APPS_SERVER_SERVER_FLAGS_H_

#include "apps/server/server_config.h"

namespace fedberry::apps {

// Part of this file's path, for ParseCommandLine's --help.
inline constexpr char kServerFlagsFile[] = "apps/server/server_flags";

// The flags as they are; the checks come when the server starts
// (server_checks.h), after the plan, as they always did.
ServerConfig ServerConfigFromFlags();

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_FLAGS_H_
