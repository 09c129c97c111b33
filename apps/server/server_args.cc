#include "apps/server/server_args.h"

#include "apps/server/server_flag_table.h"
#include "base/flag_table.h"

namespace fedberry::apps {

ServerConfig ServerFlagDefaults() {
  return base::FlagDefaults(ServerFlagTable());
}

std::vector<std::string> ServerArgsFrom(const ServerConfig& config) {
  std::vector<std::string> argv;
  base::AppendFlagArgs(ServerFlagTable(), config, argv);
  return argv;
}

}  // namespace fedberry::apps
