// Splits a data set's row indices among clients: IID (a seeded shuffle cut
// into near-equal shards) or non-IID (per-class Dirichlet proportions).
// For a given seed every client computes the same split, so each can load
// only its own rows. Shards are disjoint and together cover every row.
// Thread-safe: pure functions.
#ifndef FEDBERRY_RUNTIME_PARTITION_H_
#define FEDBERRY_RUNTIME_PARTITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::runtime {

struct PartitionSpec {
  enum class Kind { kIid, kDirichlet };
  Kind kind = Kind::kIid;
  int index = 0;       // this client's shard, 0 <= index < count
  int count = 1;       // number of shards
  double alpha = 0.5;  // Dirichlet concentration (kDirichlet only)
  uint64_t seed = 1;
};

// Parses "iid" or "dirichlet". InvalidArgument otherwise.
absl::StatusOr<PartitionSpec::Kind> ParsePartitionKind(const std::string& s);
// The name ParsePartitionKind reads: "iid" or "dirichlet".
const char* PartitionKindName(PartitionSpec::Kind kind);

// All shards, each sorted ascending. `labels` gives each row's class (used by
// kDirichlet; kIid only uses its size). InvalidArgument for count < 1,
// index out of range, alpha <= 0 or more shards than rows.
absl::StatusOr<std::vector<std::vector<int64_t>>> PartitionAll(
    const std::vector<uint8_t>& labels, const PartitionSpec& spec);

// The rows of shard spec.index only.
absl::StatusOr<std::vector<int64_t>> PartitionRows(
    const std::vector<uint8_t>& labels, const PartitionSpec& spec);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_PARTITION_H_
