#include "sim/fleet_profile.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fedberry::sim {

absl::StatusOr<std::vector<BoardProfile>> ParseFleetProfile(
    absl::string_view text) {
  std::vector<BoardProfile> out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    BoardProfile board;
    for (absl::string_view field :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(field, absl::MaxSplits('=', 1));
      double value = 0;
      if (!absl::SimpleAtod(kv.second, &value)) {
        return absl::InvalidArgumentError(absl::StrCat("fleet profile line ",
                                                       number, ": '", field,
                                                       "' is not key=number"));
      }
      if (kv.first == "data_fraction") {
        if (!(value > 0) || value > 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("fleet profile line ", number,
                           ": data_fraction must be in "
                           "(0, 1]"));
        }
        board.data_fraction = value;
      } else if (kv.first == "compute_slowdown") {
        if (!(value >= 1)) {
          return absl::InvalidArgumentError(
              absl::StrCat("fleet profile line ", number,
                           ": compute_slowdown must be >= 1"));
        }
        board.compute_slowdown = value;
      } else if (kv.first == "bandwidth_mbit") {
        if (!(value >= 0)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "fleet profile line ", number, ": bandwidth_mbit must be >= 0"));
        }
        board.bandwidth_mbit = value;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "fleet profile line ", number, ": unknown key '", kv.first,
            "' (use data_fraction, compute_slowdown, bandwidth_mbit)"));
      }
    }
    out.push_back(board);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError("fleet profile lists no clients");
  }
  return out;
}

absl::StatusOr<std::vector<BoardProfile>> LoadFleetProfile(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read fleet profile ", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseFleetProfile(buffer.str());
}

}  // namespace fedberry::sim
