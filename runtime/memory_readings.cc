#include "runtime/memory_readings.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/proc_parsers.h"

namespace fedberry::runtime {
namespace {

absl::StatusOr<PsiLine> ParsePsiLine(absl::string_view line) {
  // "some avg10=0.00 avg60=0.00 avg300=0.00 total=0"
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  PsiLine out;
  int seen = 0;
  for (size_t i = 1; i < fields.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(fields[i], absl::MaxSplits('=', 1));
    bool ok = true;
    if (kv.first == "avg10") {
      ok = absl::SimpleAtod(kv.second, &out.avg10);
    } else if (kv.first == "avg60") {
      ok = absl::SimpleAtod(kv.second, &out.avg60);
    } else if (kv.first == "avg300") {
      ok = absl::SimpleAtod(kv.second, &out.avg300);
    } else if (kv.first == "total") {
      ok = absl::SimpleAtoi(kv.second, &out.total_us);
    } else {
      continue;  // a field a later kernel may add
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed PSI line '", line, "': bad value in '", fields[i], "'"));
    }
    ++seen;
  }
  if (seen != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed PSI line '", line,
                     "': expected avg10=, avg60=, avg300= and total="));
  }
  return out;
}

absl::StatusOr<uint64_t> ParseMeminfoKb(absl::string_view text,
                                        absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || line.substr(0, colon) != key) {
      continue;
    }
    std::vector<absl::string_view> parts =
        absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipEmpty());
    uint64_t kb = 0;
    if (parts.size() != 2 || parts[1] != "kB" ||
        !absl::SimpleAtoi(parts[0], &kb)) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed /proc/meminfo line '", line, "'"));
    }
    return kb * 1024;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("/proc/meminfo has no ", key, " line"));
}

std::string MiB(uint64_t bytes) {
  return absl::StrFormat("%.0f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

absl::StatusOr<Psi> ParsePsi(absl::string_view text) {
  Psi psi;
  bool have_some = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    if (absl::StartsWith(line, "some ")) {
      auto parsed = ParsePsiLine(line);
      if (!parsed.ok()) return parsed.status();
      psi.some = *parsed;
      have_some = true;
    } else if (absl::StartsWith(line, "full ")) {
      auto parsed = ParsePsiLine(line);
      if (!parsed.ok()) return parsed.status();
      psi.full = *parsed;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed PSI file: unexpected line '", line, "'"));
    }
  }
  if (!have_some) {
    return absl::InvalidArgumentError("PSI file has no 'some' line");
  }
  return psi;
}

absl::StatusOr<MemInfo> ParseMemInfo(absl::string_view text) {
  MemInfo info;
  auto total = ParseMeminfoKb(text, "MemTotal");
  if (!total.ok()) return total.status();
  auto available = ParseMeminfoKb(text, "MemAvailable");
  if (!available.ok()) return available.status();
  info.total_bytes = *total;
  info.available_bytes = *available;
  return info;
}

absl::StatusOr<CgroupPath> ParseProcSelfCgroup(absl::string_view text) {
  std::optional<CgroupPath> v2;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty()) continue;
    // "hierarchy-id:controller-list:path"; the path may hold ':'.
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3 || parts[2].empty() || parts[2][0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed /proc/self/cgroup line '", line, "'"));
    }
    if (parts[0] == "0" && parts[1].empty()) {
      v2 = CgroupPath{CgroupPath::Version::kV2, std::string(parts[2])};
      continue;
    }
    for (absl::string_view controller : absl::StrSplit(parts[1], ',')) {
      if (controller == "memory") {
        return CgroupPath{CgroupPath::Version::kV1, std::string(parts[2])};
      }
    }
  }
  if (v2) return *v2;
  return absl::NotFoundError("/proc/self/cgroup names no memory cgroup");
}

absl::StatusOr<std::optional<uint64_t>> ParseCgroupLimit(
    absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text == "max") return std::optional<uint64_t>();
  uint64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed cgroup memory limit '", text, "': expected bytes or max"));
  }
  // cgroup v1 writes "no limit" as the largest page-aligned long.
  if (v >= (uint64_t{1} << 62)) return std::optional<uint64_t>();
  return std::optional<uint64_t>(v);
}

absl::StatusOr<uint64_t> ParseCgroupUsage(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  uint64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed cgroup memory usage '", text, "'"));
  }
  return v;
}

std::optional<uint64_t> MemoryReadings::available_bytes() const {
  std::optional<uint64_t> out = mem_available_bytes;
  if (cgroup_limit_bytes && cgroup_usage_bytes) {
    const uint64_t headroom = *cgroup_limit_bytes > *cgroup_usage_bytes
                                  ? *cgroup_limit_bytes - *cgroup_usage_bytes
                                  : 0;
    out = out ? std::min(*out, headroom) : headroom;
  }
  return out;
}

std::optional<double> MemoryReadings::available_fraction() const {
  std::optional<double> out;
  if (mem_available_bytes && mem_total_bytes && *mem_total_bytes > 0) {
    out = static_cast<double>(*mem_available_bytes) /
          static_cast<double>(*mem_total_bytes);
  }
  if (cgroup_limit_bytes && cgroup_usage_bytes && *cgroup_limit_bytes > 0) {
    const double headroom =
        *cgroup_limit_bytes > *cgroup_usage_bytes
            ? static_cast<double>(*cgroup_limit_bytes - *cgroup_usage_bytes) /
                  static_cast<double>(*cgroup_limit_bytes)
            : 0.0;
    out = out ? std::min(*out, headroom) : headroom;
  }
  return out;
}

std::string MemoryReadings::Summary() const {
  std::vector<std::string> parts;
  if (psi) {
    parts.push_back(absl::StrFormat("psi some10=%.1f%%", psi->some.avg10));
    if (psi->full) {
      parts.back() += absl::StrFormat(" full10=%.1f%%", psi->full->avg10);
    }
  } else {
    parts.push_back("psi n/a");
  }
  if (auto bytes = available_bytes()) {
    std::string s = absl::StrCat("available ", MiB(*bytes));
    if (auto f = available_fraction()) {
      s += absl::StrFormat(" (%.1f%%)", *f * 100);
    }
    parts.push_back(s);
  } else {
    parts.push_back("available n/a");
  }
  if (rss_bytes) parts.push_back(absl::StrCat("rss ", MiB(*rss_bytes)));
  if (cgroup_usage_bytes) {
    parts.push_back(absl::StrCat(
        "cgroup ", MiB(*cgroup_usage_bytes), "/",
        cgroup_limit_bytes ? MiB(*cgroup_limit_bytes) : "no limit"));
  }
  return absl::StrJoin(parts, ", ");
}

MemoryReadings MemoryReader::Read() {
  MemoryReadings out;
  if (auto text = files_.Read(options_.pressure_path); !text.ok()) {
    out.problems.push_back(absl::StrCat("no PSI: ", text.status().message()));
  } else if (auto psi = ParsePsi(*text); !psi.ok()) {
    out.problems.push_back(std::string(psi.status().message()));
  } else {
    out.psi = *psi;
  }
  if (auto text = files_.Read(options_.meminfo_path); !text.ok()) {
    out.problems.push_back(std::string(text.status().message()));
  } else if (auto info = ParseMemInfo(*text); !info.ok()) {
    out.problems.push_back(std::string(info.status().message()));
  } else {
    out.mem_total_bytes = info->total_bytes;
    out.mem_available_bytes = info->available_bytes;
  }
  if (auto text = files_.Read(options_.status_path); !text.ok()) {
    out.problems.push_back(std::string(text.status().message()));
  } else if (auto mem = ParseProcStatus(*text); !mem.ok()) {
    out.problems.push_back(std::string(mem.status().message()));
  } else {
    out.rss_bytes = mem->rss_bytes;
  }
  ReadCgroup(out);
  return out;
}

void MemoryReader::ReadCgroup(MemoryReadings& out) {
  auto text = files_.Read(options_.self_cgroup_path);
  if (!text.ok()) {
    out.problems.push_back(std::string(text.status().message()));
    return;
  }
  auto where = ParseProcSelfCgroup(*text);
  if (!where.ok()) {
    out.problems.push_back(std::string(where.status().message()));
    return;
  }
  const bool v1 = where->version == CgroupPath::Version::kV1;
  const std::string root =
      v1 ? options_.cgroup_v1_root : options_.cgroup_v2_root;
  const char* usage_name = v1 ? "memory.usage_in_bytes" : "memory.current";
  const char* limit_name = v1 ? "memory.limit_in_bytes" : "memory.max";
  std::string dir = where->path == "/" ? root : root + where->path;
  // In a cgroup namespace (a container) the hierarchy is mounted at our own
  // cgroup, so the path /proc/self/cgroup names may not exist below it.
  auto usage = files_.Read(absl::StrCat(dir, "/", usage_name));
  if (absl::IsNotFound(usage.status()) && dir != root) {
    dir = root;
    usage = files_.Read(absl::StrCat(dir, "/", usage_name));
  }
  if (!usage.ok()) {
    // The root cgroup of v2 has neither file: no cgroup limit applies.
    if (!(absl::IsNotFound(usage.status()) && !v1 && where->path == "/")) {
      out.problems.push_back(std::string(usage.status().message()));
    }
    return;
  }
  if (auto u = ParseCgroupUsage(*usage); u.ok()) {
    out.cgroup_usage_bytes = *u;
  } else {
    out.problems.push_back(std::string(u.status().message()));
  }
  auto limit = files_.Read(absl::StrCat(dir, "/", limit_name));
  if (!limit.ok()) {
    out.problems.push_back(std::string(limit.status().message()));
  } else if (auto l = ParseCgroupLimit(*limit); !l.ok()) {
    out.problems.push_back(std::string(l.status().message()));
  } else {
    out.cgroup_limit_bytes = *l;
  }
}

}  // namespace fedberry::runtime
