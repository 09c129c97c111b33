// Text that came from the wire (client names, ids, task ids, tensor names),
// made safe to put into a log line: control characters, quotes and bytes
// outside printable ASCII are escaped, so a name holding a newline or an ANSI
// escape cannot forge or recolour log lines, and long text is cut so a
// megabyte name cannot flood the log. Thread-safe: pure functions.
#ifndef FEDBERRY_BASE_LOG_TEXT_H_
#define FEDBERRY_BASE_LOG_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace fedberry::base {

// Longest text Printable() shows before cutting it.
inline constexpr size_t kMaxLoggedBytes = 96;

// `text` C-escaped (\n, \x1b, \", ...) and, when longer than `max_bytes`,
// cut there with "...(N bytes)" appended.
std::string Printable(absl::string_view text,
                      size_t max_bytes = kMaxLoggedBytes);

// The first control or non-ASCII byte's index in `text`, or npos when every
// byte is printable ASCII (0x20..0x7e).
size_t FirstUnprintable(absl::string_view text);

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_LOG_TEXT_H_
