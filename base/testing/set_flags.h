// Sets flags as a command line of `--name=value`s would: for tests that
// check a config written as flags (base/flag_table.h) reads back the same.
// Thread-safety: as absl::SetFlag; use under an absl::FlagSaver.
#ifndef FEDBERRY_BASE_TESTING_SET_FLAGS_H_
#define FEDBERRY_BASE_TESTING_SET_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fedberry::base {

// InvalidArgument naming the argument that is not `--name=value`, names no
// defined flag, or whose value the flag does not parse.
absl::Status SetFlagsForTest(const std::vector<std::string>& args);

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_TESTING_SET_FLAGS_H_
