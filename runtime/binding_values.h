// What the row sources (CSV, image folders) share in applying a
// DataBinding: the normalisation's checks, its values per feature or
// channel, and the words for a board's shard in Describe(). `source` names
// the source in messages ("csv file rows.csv", "images:DIR").
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_BINDING_VALUES_H_
#define FEDBERRY_RUNTIME_BINDING_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/dataset.h"
#include "runtime/partition.h"

namespace fedberry::runtime {

// InvalidArgument naming the value when a std is not a positive number or a
// mean is not finite.
absl::Status CheckNormalisation(const DataBinding& binding,
                                const std::string& source);

// `values` (the binding's mean or std) as `count` values, one per `unit`
// ("feature", "channel"): `none` each when empty, the one value repeated,
// or the values as they are. InvalidArgument for any other count.
absl::StatusOr<std::vector<float>> PerUnit(const std::vector<float>& values,
                                           float none, int64_t count,
                                           const char* what, const char* unit,
                                           const std::string& source);

// " (shard 2 of 4, iid)" for `partition` (index 1).
std::string ShardText(const PartitionSpec& partition);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_BINDING_VALUES_H_
