// Small stand-ins for the status macros of newer Abseil releases, which the
// Abseil in Debian 12 (20220623) lacks. Shaped like absl's so they can be
// swapped for the real ones later; prefixed, as Abseil's own are, so they
// cannot clash with another library's unprefixed ones.
#ifndef FEDBERRY_BASE_STATUS_MACROS_H_
#define FEDBERRY_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#define FEDBERRY_CONCAT_INNER_(a, b) a##b
#define FEDBERRY_CONCAT_(a, b) FEDBERRY_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define FEDBERRY_RETURN_IF_ERROR(expr)                                    \
  do {                                                                    \
    if (absl::Status fedberry_status_ = (expr); !fedberry_status_.ok()) { \
      return fedberry_status_;                                            \
    }                                                                     \
  } while (false)

// Declares/assigns `lhs` from a StatusOr, returning its status on error.
#define FEDBERRY_ASSIGN_OR_RETURN(lhs, expr) \
  FEDBERRY_ASSIGN_OR_RETURN_IMPL_(           \
      FEDBERRY_CONCAT_(fedberry_statusor_, __LINE__), lhs, expr)
#define FEDBERRY_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  if (!statusor.ok()) return statusor.status();              \
  lhs = std::move(statusor).value()

namespace fedberry::base {

// `s` with `prefix` put before its message (same code), to say where it arose.
inline absl::Status WithPrefix(const absl::Status& s,
                               absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_STATUS_MACROS_H_
