// The type columns of fedberry-client's flag table (client_flag_table.h)
// whose flag is text and whose field is not: each says how the one becomes
// the other and back (base/flag_table.h). Errors name what is wrong, not
// the flag; the table's reader puts "--name: " before them.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_CLIENT_FLAG_TYPES_H_
#define FEDBERRY_CLIENT_CLIENT_FLAG_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/eligibility_options.h"
#include "runtime/partition.h"
#include "runtime/watchdog.h"

namespace fedberry::client {

// --partition: "iid" or "dirichlet".
struct PartitionKindText {
  using Flag = std::string;
  using Field = runtime::PartitionSpec::Kind;
  static constexpr char kName[] = "iid|dirichlet";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& kind);
};

// --train_window: "HH:MM-HH:MM"; empty: no window.
struct TrainWindowText {
  using Flag = std::string;
  using Field = std::optional<TrainWindow>;
  static constexpr char kName[] = "HH:MM-HH:MM";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& window);
};

// A watchdog level: a share ("25%", "0.25") or a size ("250MiB"); empty:
// unset. Written back exactly: a share always with a decimal point (a bare
// "1" would be one byte), a size in bytes.
struct MemoryLevelText {
  using Flag = std::string;
  using Field = runtime::MemoryLevel;
  static constexpr char kName[] = "share or size";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& level);
};

// A size ("700MiB", in bytes when written back); empty: none. A share is
// refused.
struct ByteSizeText {
  using Flag = std::string;
  using Field = std::optional<uint64_t>;
  static constexpr char kName[] = "size";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& bytes);
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_FLAG_TYPES_H_
