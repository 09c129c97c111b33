#include "runtime/proc_parsers.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fedberry::runtime {
namespace {

// "Key:   value" -> value, for the first line whose key is `key`.
std::optional<absl::string_view> FindField(absl::string_view text,
                                           absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(line.substr(0, colon)) != key) continue;
    return absl::StripAsciiWhitespace(line.substr(colon + 1));
  }
  return std::nullopt;
}

// "123456 kB" -> bytes.
absl::StatusOr<uint64_t> ParseKb(absl::string_view key,
                                 absl::string_view value) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(value, ' ', absl::SkipEmpty());
  uint64_t kb = 0;
  if (parts.size() != 2 || parts[1] != "kB" ||
      !absl::SimpleAtoi(parts[0], &kb)) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed '", key,
                     "' line: expected '<number> kB', got '", value, "'"));
  }
  return kb * 1024;
}

std::optional<std::string> ArmCoreName(absl::string_view part) {
  static const std::pair<const char*, const char*> kParts[] = {
      {"0xd03", "Cortex-A53"}, {"0xd04", "Cortex-A35"}, {"0xd05", "Cortex-A55"},
      {"0xd07", "Cortex-A57"}, {"0xd08", "Cortex-A72"}, {"0xd09", "Cortex-A73"},
      {"0xd0b", "Cortex-A76"}, {"0xc07", "Cortex-A7"},  {"0xc08", "Cortex-A8"},
      {"0xc09", "Cortex-A9"},  {"0xb76", "ARM1176"},
  };
  for (const auto& [id, name] : kParts) {
    if (absl::EqualsIgnoreCase(part, id)) return std::string(name);
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<ProcessCpuTicks> ParseProcStat(absl::string_view text) {
  // The command name sits in parentheses and may itself hold spaces and
  // ')', so the fields start after the last ')'.
  const size_t close = text.rfind(')');
  if (text.find('(') == absl::string_view::npos ||
      close == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "malformed /proc/self/stat: no '(command)' field");
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(text.substr(close + 1)), ' ',
                     absl::SkipEmpty());
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  if (fields.size() < 13) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed /proc/self/stat: ", fields.size() + 2,
                     " fields, expected at least 15"));
  }
  ProcessCpuTicks ticks;
  if (!absl::SimpleAtoi(fields[11], &ticks.user) ||
      !absl::SimpleAtoi(fields[12], &ticks.system)) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed /proc/self/stat: utime '", fields[11],
                     "' or stime '", fields[12], "' is not a number"));
  }
  return ticks;
}

absl::StatusOr<ProcessMemory> ParseProcStatus(absl::string_view text) {
  ProcessMemory memory;
  if (auto rss = FindField(text, "VmRSS")) {
    absl::StatusOr<uint64_t> bytes = ParseKb("VmRSS", *rss);
    if (!bytes.ok()) return bytes.status();
    memory.rss_bytes = *bytes;
  }
  if (auto hwm = FindField(text, "VmHWM")) {
    absl::StatusOr<uint64_t> bytes = ParseKb("VmHWM", *hwm);
    if (!bytes.ok()) return bytes.status();
    memory.peak_rss_bytes = *bytes;
  }
  return memory;
}

absl::StatusOr<NetDevTotals> ParseNetDev(absl::string_view text,
                                         bool include_loopback) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (lines.size() < 2 || !absl::StrContains(lines[0], "Receive") ||
      !absl::StrContains(lines[1], "bytes")) {
    return absl::InvalidArgumentError(
        "malformed /proc/net/dev: missing its two header lines");
  }
  NetDevTotals totals;
  for (size_t i = 2; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed /proc/net/dev line (no 'name:'): '", lines[i], "'"));
    }
    const absl::string_view name =
        absl::StripAsciiWhitespace(lines[i].substr(0, colon));
    std::vector<absl::string_view> values =
        absl::StrSplit(lines[i].substr(colon + 1), ' ', absl::SkipEmpty());
    uint64_t rx = 0, tx = 0;
    // Receive: bytes packets errs drop fifo frame compressed multicast,
    // then Transmit: bytes ...
    if (values.size() < 16 || !absl::SimpleAtoi(values[0], &rx) ||
        !absl::SimpleAtoi(values[8], &tx)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed /proc/net/dev counters for interface '", name, "'"));
    }
    if (name == "lo" && !include_loopback) continue;
    totals.rx_bytes += rx;
    totals.tx_bytes += tx;
    ++totals.interfaces;
  }
  return totals;
}

std::optional<std::string> ParseCpuModel(absl::string_view text) {
  if (auto name = FindField(text, "model name"); name && !name->empty()) {
    return std::string(*name);
  }
  std::optional<std::string> core;
  if (auto part = FindField(text, "CPU part")) core = ArmCoreName(*part);
  auto board = FindField(text, "Model");
  if (!board || board->empty()) board = FindField(text, "Hardware");
  if (board && !board->empty()) {
    return core ? absl::StrCat(*board, " (", *core, ")") : std::string(*board);
  }
  return core;
}

absl::StatusOr<uint64_t> ParseMemTotal(absl::string_view text) {
  auto total = FindField(text, "MemTotal");
  if (!total) {
    return absl::InvalidArgumentError("/proc/meminfo has no MemTotal line");
  }
  return ParseKb("MemTotal", *total);
}

std::optional<std::string> ParseOsPrettyName(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "PRETTY_NAME=")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (line.size() >= 2 && (line.front() == '"' || line.front() == '\'') &&
        line.back() == line.front()) {
      line = line.substr(1, line.size() - 2);
    }
    if (line.empty()) return std::nullopt;
    return std::string(line);
  }
  return std::nullopt;
}

}  // namespace fedberry::runtime
