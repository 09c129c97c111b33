#include "base/log_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace fedberry::base {

std::string Printable(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return absl::CHexEscape(text);
  return absl::StrCat(absl::CHexEscape(text.substr(0, max_bytes)), "...(",
                      text.size(), " bytes)");
}

size_t FirstUnprintable(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c > 0x7e) return i;
  }
  return absl::string_view::npos;
}

}  // namespace fedberry::base
