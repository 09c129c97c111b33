// A command line written from a typed config: `--name=value` for each value
// that differs from the binary's default, in the text Abseil's flag parser
// reads back (absl::UnparseFlag), so parsing the result gives the config
// back. fedberry-sim builds its children's command lines this way.
// Thread-safety: not thread-safe; one per command line being built.
#ifndef FEDBERRY_BASE_FLAG_ARGS_H_
#define FEDBERRY_BASE_FLAG_ARGS_H_

#include <string>
#include <vector>

#include "absl/flags/marshalling.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace fedberry::base {

class FlagArgs {
 public:
  // Appends to `argv`, which must outlive this.
  explicit FlagArgs(std::vector<std::string>& argv) : argv_(argv) {}

  template <typename T>
  void Add(const char* name, const T& value, const T& base) {
    if (value == base) return;
    argv_.push_back(absl::StrCat("--", name, "=", absl::UnparseFlag(value)));
  }
  // Written as the flag parser reads it: "90s", "1h30m".
  void Add(const char* name, absl::Duration value, absl::Duration base);
  // Comma-separated, as a std::vector<std::string> flag reads it.
  void Add(const char* name, const std::vector<std::string>& value,
           const std::vector<std::string>& base);

 private:
  std::vector<std::string>& argv_;
};

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_FLAG_ARGS_H_
