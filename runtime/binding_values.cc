#include "runtime/binding_values.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {

absl::Status CheckNormalisation(const DataBinding& binding,
                                const std::string& source) {
  for (float s : binding.std) {
    if (!(s > 0) || !std::isfinite(s)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": input std ", s, " is not a positive number"));
    }
  }
  for (float m : binding.mean) {
    if (!std::isfinite(m)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": input mean ", m, " is not finite"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> PerUnit(const std::vector<float>& values,
                                           float none, int64_t count,
                                           const char* what, const char* unit,
                                           const std::string& source) {
  if (values.empty()) return std::vector<float>(count, none);
  if (values.size() == 1) return std::vector<float>(count, values[0]);
  if (static_cast<int64_t>(values.size()) == count) return values;
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": the input ", what, " has ", values.size(),
                   " values; it needs 1 or one per ", unit, " (", count, ")"));
}

std::string ShardText(const PartitionSpec& partition) {
  return absl::StrCat(" (shard ", partition.index + 1, " of ", partition.count,
                      ", ", PartitionKindName(partition.kind), ")");
}

}  // namespace fedberry::runtime
