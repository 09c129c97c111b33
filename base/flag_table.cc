#include "base/flag_table.h"

#include "absl/flags/reflection.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fedberry::base {

absl::StatusOr<CommaList::Field> CommaList::Parse(const Flag& text) {
  if (text.empty()) return Field{};
  return Field(absl::StrSplit(text, ','));
}

CommaList::Flag CommaList::Unparse(const Field& items) {
  return absl::StrJoin(items, ",");
}

const absl::CommandLineFlag* FindProgramFlag(absl::string_view name) {
  return absl::FindCommandLineFlag(name);
}

}  // namespace fedberry::base
