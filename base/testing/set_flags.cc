#include "base/testing/set_flags.h"

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fedberry::base {

absl::Status SetFlagsForTest(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (!absl::StartsWith(arg, "--") || eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", arg, "' is not --name=value"));
    }
    absl::CommandLineFlag* flag =
        absl::FindCommandLineFlag(arg.substr(2, eq - 2));
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("no flag for ", arg));
    }
    std::string error;
    if (!flag->ParseFrom(arg.substr(eq + 1), &error)) {
      return absl::InvalidArgumentError(absl::StrCat(arg, ": ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace fedberry::base
