// Text that came from the wire (client names, ids, task ids, tensor names,
// device strings, versions), made safe to log or to keep. For a log line:
// control characters, quotes and bytes outside printable ASCII are escaped,
// so a name holding a newline or an ANSI escape cannot forge or recolour log
// lines, and long text is cut so a megabyte name cannot flood the log. For a
// record, a page or JSON: valid UTF-8, cut on a character boundary, so no
// writer meets a byte string it cannot encode. Thread-safe: pure functions.
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

// `text` as valid UTF-8 of at most `max_bytes` bytes: each byte that does
// not start or continue a well-formed character (a stray continuation byte,
// a truncated, overlong or surrogate sequence, a code point above U+10FFFF)
// becomes U+FFFD, and the text is cut after the last whole character that
// fits, never inside one.
std::string ValidUtf8(absl::string_view text, size_t max_bytes);

// The first control or non-ASCII byte's index in `text`, or npos when every
// byte is printable ASCII (0x20..0x7e).
size_t FirstUnprintable(absl::string_view text);

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_LOG_TEXT_H_
