// The definitions of fedberry-server's flags that fedberry-sim shares (the
// FEDBERRY_SHARED_FLAG rows of the server's table, server_flags.inc), linked
// by both programs, and their reading for fedberry-sim.
#include "apps/server/server_flags_shared.h"

#include <string>

#include "absl/flags/flag.h"
#include "apps/server/server_flag_table.h"
#include "base/flag_table.h"

// Included by file name from this folder, so each flag's file, which --help
// prints, is the table's path in the source tree.
#define FEDBERRY_FLAG(Type, name, default_value, field, help)
#define FEDBERRY_SHARED_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_DEFINE_FLAG(Type, name, default_value, help);
#include "server_flags.inc"
#undef FEDBERRY_FLAG
#undef FEDBERRY_SHARED_FLAG

namespace fedberry::apps {

absl::Status ReadSharedServerFlags(ServerConfig& config) {
  return base::ReadFlags(SharedServerFlagTable(), config);
}

}  // namespace fedberry::apps
