#include "apps/server/server_flag_table.h"

#include <string>

#include "absl/time/time.h"
#include "apps/server/server_args.h"  // kDefaultServerListen
#include "runtime/image_dataset.h"    // kDefaultFashionMnistDir

namespace fedberry::apps {
namespace {

#define FEDBERRY_ROW(Type, name, default_value, field, help) \
  FEDBERRY_FLAG_ROW(ServerConfig, Type, name, default_value, field, help),

// Every row, in the table's order.
base::FlagTable<ServerConfig> AllRows() {
#define FEDBERRY_FLAG FEDBERRY_ROW
#define FEDBERRY_SHARED_FLAG FEDBERRY_ROW
  return {
#include "server_flags.inc"
  };
#undef FEDBERRY_FLAG
#undef FEDBERRY_SHARED_FLAG
}

// The shared rows only.
base::FlagTable<ServerConfig> SharedRows() {
#define FEDBERRY_FLAG(Type, name, default_value, field, help)
#define FEDBERRY_SHARED_FLAG FEDBERRY_ROW
  return {
#include "server_flags.inc"
  };
#undef FEDBERRY_FLAG
#undef FEDBERRY_SHARED_FLAG
}

#undef FEDBERRY_ROW

}  // namespace

const base::FlagTable<ServerConfig>& SharedServerFlagTable() {
  static const auto* const table =
      new base::FlagTable<ServerConfig>(SharedRows());
  return *table;
}

const base::FlagTable<ServerConfig>& ServerFlagTable() {
  static const auto* const table = new base::FlagTable<ServerConfig>(AllRows());
  return *table;
}

}  // namespace fedberry::apps
