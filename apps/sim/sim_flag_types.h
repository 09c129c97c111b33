// The type columns of fedberry-sim's flag table (sim_flag_table.h) whose
// flag is text and whose field is not: each says how the one becomes the
// other and back (base/flag_table.h). Errors name what is wrong, not the
// flag; the table's reader puts "--name: " before them.
// Thread-safety: pure functions.
#ifndef FEDBERRY_APPS_SIM_SIM_FLAG_TYPES_H_
#define FEDBERRY_APPS_SIM_SIM_FLAG_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace fedberry::sim {

// A whole number; empty: none (the child's own default).
struct OptionalCountText {
  using Flag = std::string;
  using Field = std::optional<int>;
  static constexpr char kName[] = "int or empty";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& count);
};

// A size ("150MiB", "1GiB"; in bytes when written back), which must be
// given: a share or empty text is refused.
struct SizeText {
  using Flag = std::string;
  using Field = uint64_t;
  static constexpr char kName[] = "size";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& bytes);
};

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_SIM_FLAG_TYPES_H_
