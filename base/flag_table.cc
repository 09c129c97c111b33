#include "base/flag_table.h"

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
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

std::string FlagDocsMarkdown(const std::vector<FlagDoc>& docs) {
  // A '|' in a cell would end it; Markdown tables take it escaped.
  const auto cell = [](absl::string_view text) {
    return absl::StrReplaceAll(text, {{"|", "\\|"}});
  };
  std::string out =
      "| flag | type | default | what it does |\n|---|---|---|---|\n";
  for (const FlagDoc& doc : docs) {
    const std::string value = doc.default_text.empty()
                                  ? std::string("(empty)")
                                  : absl::StrCat("`", doc.default_text, "`");
    absl::StrAppend(&out, "| `--", doc.name, "` | ", cell(doc.type), " | ",
                    cell(value), " | ", cell(doc.help), " |\n");
  }
  return out;
}

}  // namespace fedberry::base
