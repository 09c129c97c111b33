// The definitions of fedberry-server's own flags (the rows of its table,
// server_flags.inc, that fedberry-sim does not share) and
// ServerConfigFromFlags, the one place the server's flags are read.
#include "apps/server/server_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "apps/server/server_args.h"  // kDefaultServerListen
#include "apps/server/server_flag_table.h"
#include "base/flag_table.h"
#include "base/status_macros.h"
#include "runtime/image_dataset.h"  // kDefaultFashionMnistDir

// Included by file name from this folder, so each flag's file, which --help
// prints, is the table's path in the source tree.
#define FEDBERRY_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_DEFINE_FLAG(Type, name, default_value, help);
#define FEDBERRY_SHARED_FLAG(Type, name, default_value, field, help)
#include "server_flags.inc"
#undef FEDBERRY_FLAG
#undef FEDBERRY_SHARED_FLAG

namespace fedberry::apps {

absl::StatusOr<ServerConfig> ServerConfigFromFlags() {
  ServerConfig config;
  FEDBERRY_RETURN_IF_ERROR(base::ReadFlags(ServerFlagTable(), config));
  // One flag for both links: plaintext beyond loopback, served and dialled.
  config.gateway.link.insecure = config.transport.transport.insecure;
  return config;
}

}  // namespace fedberry::apps
