#include "base/log_text.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace fedberry::base {
namespace {

constexpr absl::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

// The length of the well-formed UTF-8 character at the start of `text`
// (RFC 3629: no overlongs, no surrogates, at most U+10FFFF), or 0.
size_t CharacterLength(absl::string_view text) {
  const auto byte = [&](size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) low = 0xa0;   // overlong
    if (b0 == 0xed) high = 0x9f;  // surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) low = 0x90;   // overlong
    if (b0 == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < n || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return n;
}

}  // namespace

std::string Printable(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return absl::CHexEscape(text);
  return absl::StrCat(absl::CHexEscape(text.substr(0, max_bytes)), "...(",
                      text.size(), " bytes)");
}

std::string ValidUtf8(absl::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  while (!text.empty()) {
    const size_t n = CharacterLength(text);
    const absl::string_view piece = n > 0 ? text.substr(0, n) : kReplacement;
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece.data(), piece.size());
    text.remove_prefix(n > 0 ? n : 1);
  }
  return out;
}

size_t FirstUnprintable(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c > 0x7e) return i;
  }
  return absl::string_view::npos;
}

}  // namespace fedberry::base
