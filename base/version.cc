#include "base/version.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#ifndef FEDBERRY_VERSION
#error "FEDBERRY_VERSION is defined by CMake (PROJECT_VERSION)"
#endif
#ifndef FEDBERRY_BUILD_EPOCH
#error "FEDBERRY_BUILD_EPOCH is defined by CMake (base/CMakeLists.txt)"
#endif

namespace fedberry {

absl::string_view FedberryVersion() { return FEDBERRY_VERSION; }

absl::Time FedberryBuildTime() {
  return absl::FromUnixSeconds(FEDBERRY_BUILD_EPOCH);
}

absl::StatusOr<std::vector<int>> ParseVersion(absl::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text.substr(0, 64),
        "' is not a version (numbers joined by dots, e.g. 0.2.0)"));
  };
  absl::string_view numbers = text.substr(0, text.find_first_of("-+~"));
  if (numbers.empty()) return invalid();
  std::vector<int> parts;
  for (absl::string_view part : absl::StrSplit(numbers, '.')) {
    int n = 0;
    if (part.empty() || part.size() > 6 ||
        part.find_first_not_of("0123456789") != absl::string_view::npos ||
        !absl::SimpleAtoi(part, &n)) {
      return invalid();
    }
    parts.push_back(n);
  }
  if (parts.size() > 4) return invalid();
  return parts;
}

int CompareVersions(const std::vector<int>& a, const std::vector<int>& b) {
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const int x = i < a.size() ? a[i] : 0;
    const int y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace fedberry
