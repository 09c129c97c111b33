#include "server/fleet/site_gateways.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/log_text.h"

namespace fedberry::server {

absl::StatusOr<SiteGateways> SiteGateways::Parse(const std::string& list) {
  SiteGateways gateways;
  gateways.text_ = list;
  for (absl::string_view entry : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    entry = absl::StripAsciiWhitespace(entry);
    std::vector<absl::string_view> parts = absl::StrSplit(entry, ':');
    uint32_t max_boards = 0;
    const bool counted = parts.size() == 2;
    if (parts.size() > 2 || parts[0].empty() ||
        base::FirstUnprintable(parts[0]) != absl::string_view::npos ||
        (counted &&
         (!absl::SimpleAtoi(parts[1], &max_boards) || max_boards == 0))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--site_gateways: '", base::Printable(entry),
          "' is not a gateway's name or name:max_boards (e.g. barn-gw:50)"));
    }
    gateways.max_boards_[std::string(parts[0])] = max_boards;
  }
  return gateways;
}

absl::Status SiteGateways::Admit(const std::string& name,
                                 uint32_t boards) const {
  if (boards == 0) return absl::OkStatus();
  auto it = max_boards_.find(name);
  if (it == max_boards_.end()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "not joined: '", base::Printable(name),
        "' declares itself a site "
        "gateway of ",
        boards,
        " boards, and only the site gateways that "
        "--site_gateways names may forward their boards' updates (",
        text_.empty() ? "it names none" : base::Printable(text_, 256), ")"));
  }
  if (it->second > 0 && boards > it->second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not joined: site gateway '", name, "' declares ", boards,
        " boards; --site_gateways allows it at most ", it->second));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::server
