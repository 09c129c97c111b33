#include "apps/sim/sim_flag_types.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/watchdog.h"

namespace fedberry::sim {

absl::StatusOr<OptionalCountText::Field> OptionalCountText::Parse(
    const Flag& text) {
  if (text.empty()) return std::nullopt;
  int count = 0;
  if (!absl::SimpleAtoi(text, &count)) {
    return absl::InvalidArgumentError(
        absl::StrCat(text, " is not a whole number"));
  }
  return count;
}

OptionalCountText::Flag OptionalCountText::Unparse(const Field& count) {
  return count ? absl::StrCat(*count) : "";
}

absl::StatusOr<SizeText::Field> SizeText::Parse(const Flag& text) {
  absl::StatusOr<runtime::MemoryLevel> level = runtime::ParseMemoryLevel(text);
  if (!level.ok() || !level->bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(text, " is not a size (e.g. 150MiB, 1GiB)"));
  }
  return *level->bytes;
}

SizeText::Flag SizeText::Unparse(const Field& bytes) {
  return absl::StrCat(bytes);
}

}  // namespace fedberry::sim
