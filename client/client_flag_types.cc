#include "client/client_flag_types.h"

#include "absl/flags/marshalling.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fedberry::client {

absl::StatusOr<PartitionKindText::Field> PartitionKindText::Parse(
    const Flag& text) {
  return runtime::ParsePartitionKind(text);
}

PartitionKindText::Flag PartitionKindText::Unparse(const Field& kind) {
  return runtime::PartitionKindName(kind);
}

absl::StatusOr<TrainWindowText::Field> TrainWindowText::Parse(
    const Flag& text) {
  return ParseTrainWindow(text);
}

TrainWindowText::Flag TrainWindowText::Unparse(const Field& window) {
  return window ? window->ToString() : "";
}

absl::StatusOr<MemoryLevelText::Field> MemoryLevelText::Parse(
    const Flag& text) {
  return runtime::ParseMemoryLevel(text);
}

MemoryLevelText::Flag MemoryLevelText::Unparse(const Field& level) {
  if (level.fraction) {
    // The shortest text that reads back the same double; the parser takes
    // no exponent.
    std::string text = absl::UnparseFlag(*level.fraction);
    if (absl::StrContains(text, 'e')) {
      text = absl::StrFormat("%.17f", *level.fraction);
    }
    if (!absl::StrContains(text, '.')) text.append(".0");
    return text;
  }
  if (level.bytes) return absl::StrCat(*level.bytes);
  return "";
}

absl::StatusOr<ByteSizeText::Field> ByteSizeText::Parse(const Flag& text) {
  absl::StatusOr<runtime::MemoryLevel> level = runtime::ParseMemoryLevel(text);
  if (!level.ok()) return level.status();
  if (level->fraction) return absl::InvalidArgumentError("takes a size");
  return level->bytes;
}

ByteSizeText::Flag ByteSizeText::Unparse(const Field& bytes) {
  return bytes ? absl::StrCat(*bytes) : "";
}

}  // namespace fedberry::client
