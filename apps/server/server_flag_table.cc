#include "apps/server/server_flag_table.h"

#include <string>

#include "absl/time/time.h"
#include "apps/server/server_args.h"  // kDefaultServerListen
#include "runtime/image_dataset.h"    // kDefaultFashionMnistDir

namespace fedberry::apps {
namespace {

// A table's rows, in the braces of a FlagTable<ServerConfig>.
#define FEDBERRY_FLAG(Type, name, default_value, field, help) \
  FEDBERRY_FLAG_ROW(ServerConfig, Type, name, default_value, field, help),

base::FlagTable<ServerConfig> SharedRows() {
  return {
#include "server_flags_shared.inc"
  };
}

base::FlagTable<ServerConfig> OwnRows() {
  return {
#include "server_flags.inc"
  };
}

#undef FEDBERRY_FLAG

}  // namespace

const base::FlagTable<ServerConfig>& SharedServerFlagTable() {
  static const auto* const table =
      new base::FlagTable<ServerConfig>(SharedRows());
  return *table;
}

const base::FlagTable<ServerConfig>& ServerFlagTable() {
  static const auto* const table = [] {
    auto* rows = new base::FlagTable<ServerConfig>(SharedRows());
    for (base::FlagRow<ServerConfig>& row : OwnRows()) {
      rows->push_back(std::move(row));
    }
    return rows;
  }();
  return *table;
}

}  // namespace fedberry::apps
