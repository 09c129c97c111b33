#include "client/client_args.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/flag_table.h"
#include "client/client_flag_table.h"

namespace fedberry::client {

std::string DefaultCacheDir(const std::string& checkpoint_dir) {
  if (!checkpoint_dir.empty()) return absl::StrCat(checkpoint_dir, "/cache");
  return (std::filesystem::temp_directory_path() / "fedberry-cache").string();
}

std::string DefaultCriuDir(const std::string& checkpoint_dir) {
  return absl::StrCat(checkpoint_dir, "/criu");
}

ClientConfig ClientFlagDefaults() {
  return base::FlagDefaults(ClientFlagTable());
}

std::vector<std::string> ClientArgsFrom(const ClientConfig& config) {
  // The folders the client would pick for its checkpoint_dir go unsaid.
  ClientConfig given = config;
  if (given.data.cache_dir == DefaultCacheDir(given.checkpoint_dir)) {
    given.data.cache_dir.clear();
  }
  if (given.criu_dir == DefaultCriuDir(given.checkpoint_dir)) {
    given.criu_dir.clear();
  }
  std::vector<std::string> argv;
  base::AppendFlagArgs(ClientFlagTable(), given, argv);
  return argv;
}

}  // namespace fedberry::client
