#include "base/flag_args.h"

#include "absl/strings/str_join.h"

namespace fedberry::base {

void FlagArgs::Add(const char* name, absl::Duration value,
                   absl::Duration base) {
  if (value == base) return;
  argv_.push_back(absl::StrCat("--", name, "=", absl::FormatDuration(value)));
}

void FlagArgs::Add(const char* name, const std::vector<std::string>& value,
                   const std::vector<std::string>& base) {
  if (value == base) return;
  argv_.push_back(absl::StrCat("--", name, "=", absl::StrJoin(value, ",")));
}

}  // namespace fedberry::base
