#include "base/command_line.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/version.h"

namespace fedberry {

std::vector<char*> ParseCommandLine(int argc, char** argv,
                                    absl::string_view usage,
                                    absl::string_view main_file) {
  return ParseCommandLine(argc, argv, usage,
                          std::vector<std::string>{std::string(main_file)});
}

std::vector<char*> ParseCommandLine(int argc, char** argv,
                                    absl::string_view usage,
                                    std::vector<std::string> flag_files) {
  absl::SetProgramUsageMessage(usage);
  absl::FlagsUsageConfig config;
  config.contains_help_flags =
      [files = std::move(flag_files)](absl::string_view path) {
        for (const std::string& file : files) {
          if (absl::StrContains(path, file)) return true;
        }
        return false;
      };
  config.contains_helpshort_flags = config.contains_help_flags;
  config.version_string = [] {
    return absl::StrCat("fedberry ", FedberryVersion(), "\n");
  };
  absl::SetFlagsUsageConfig(config);
  // absl::ParseCommandLine would exit with status 1 after printing help;
  // parse without that, then answer usage flags ourselves. (Newer Abseil
  // has ParseAbseilFlagsOnly for this.)
  std::vector<char*> positional = absl::flags_internal::ParseCommandLineImpl(
      argc, argv, absl::flags_internal::ArgvListAction::kRemoveParsedArgs,
      absl::flags_internal::UsageFlagsAction::kIgnoreUsage,
      absl::flags_internal::OnUndefinedFlag::kAbortIfUndefined);
  // -1: no usage flag; otherwise help or version was printed, which is an
  // answer, not an error.
  if (absl::flags_internal::HandleUsageFlags(
          std::cout, absl::ProgramUsageMessage()) >= 0) {
    std::cout.flush();
    std::exit(0);
  }
  return positional;
}

}  // namespace fedberry
