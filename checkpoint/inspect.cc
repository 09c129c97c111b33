#include "checkpoint/inspect.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace fedberry::checkpoint {
namespace {

std::string HumanBytes(uint64_t b) {
  if (b >= (1u << 20)) return absl::StrFormat("%.1f MiB", b / 1048576.0);
  if (b >= 1024) return absl::StrFormat("%.1f KiB", b / 1024.0);
  return absl::StrCat(b, " B");
}

// The state a checkpoint holds, from its state.json (both the client's
// training checkpoints and the server's federation checkpoints carry one).
nlohmann::json StateOf(const LoadedCheckpoint& c) {
  auto it = c.files.find("state.json");
  if (it == c.files.end()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return nlohmann::json::object();
  nlohmann::json s = {{"kind", j.value("kind", "unknown")}};
  for (const char* key : {"round", "task_id", "model", "step", "planned",
                          "samples", "finished", "next_round"}) {
    if (j.contains(key)) s[key] = j[key];
  }
  if (j.contains("clients") && j["clients"].is_array()) {
    s["clients"] = j["clients"].size();
  }
  if (j.contains("history") && j["history"].is_array() &&
      !j["history"].empty()) {
    const auto& last = j["history"].back();
    s["rounds_done"] = j["history"].size();
    if (last.contains("eval")) {
      s["last_test_accuracy"] = last["eval"].value("accuracy", 0.0);
    }
  }
  return s;
}

// "round 3, step 40/150" or "next round 4, 4 clients": what a reader wants
// at a glance.
std::string Summary(const nlohmann::json& s) {
  std::vector<std::string> parts;
  const std::string kind = s.value("kind", "unknown");
  if (kind == "client-training") {
    parts.push_back(absl::StrCat("training round ", s.value("round", 0)));
    parts.push_back(
        absl::StrCat("step ", s.value("step", 0), "/", s.value("planned", 0)));
    if (s.value("finished", false)) parts.push_back("finished");
  } else if (kind == "server-federation") {
    parts.push_back(absl::StrCat("next round ", s.value("next_round", 0)));
    parts.push_back(absl::StrCat(s.value("clients", 0), " clients"));
    if (s.contains("last_test_accuracy")) {
      parts.push_back(absl::StrFormat("test accuracy %.4f",
                                      s["last_test_accuracy"].get<double>()));
    }
  } else {
    parts.push_back(kind);
  }
  return absl::StrJoin(parts, ", ");
}

nlohmann::json InfoJson(const CheckpointInfo& info,
                        const nlohmann::json& state) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : info.files) {
    files.push_back({{"name", f.name}, {"size", f.size}, {"xxh3", f.xxh3}});
  }
  nlohmann::json j = {{"name", info.name},
                      {"seq", info.seq},
                      {"latest", info.latest},
                      {"bytes", info.bytes},
                      {"valid", info.integrity.ok()},
                      {"files", files}};
  if (!info.integrity.ok()) j["error"] = info.integrity.message();
  if (!state.empty()) j["state"] = state;
  return j;
}

// Every checkpoint with its state (read only from verified ones: a corrupt
// state.json says nothing trustworthy).
absl::StatusOr<std::vector<std::pair<CheckpointInfo, nlohmann::json>>> Scan(
    CheckpointStore& store) {
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<CheckpointInfo> infos, store.List());
  std::vector<std::pair<CheckpointInfo, nlohmann::json>> out;
  for (auto& info : infos) {
    nlohmann::json state = nlohmann::json::object();
    if (info.integrity.ok()) {
      if (auto loaded = store.Load(info.name); loaded.ok()) {
        state = StateOf(*loaded);
      }
    }
    out.emplace_back(std::move(info), std::move(state));
  }
  return out;
}

}  // namespace

absl::Status ListCheckpoints(CheckpointStore& store, const InspectOptions& o,
                             std::ostream& out) {
  FEDBERRY_ASSIGN_OR_RETURN(auto all, Scan(store));
  if (all.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no checkpoints in ", store.root()));
  }
  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [info, state] : all) j.push_back(InfoJson(info, state));
    out << j.dump(1) << "\n";
    return absl::OkStatus();
  }
  out << absl::StrFormat("%-16s %-6s %10s %5s  %-7s %s\n", "CHECKPOINT",
                         "LATEST", "SIZE", "FILES", "VALID", "HOLDS");
  for (const auto& [info, state] : all) {
    out << absl::StrFormat(
        "%-16s %-6s %10s %5d  %-7s %s\n", info.name, info.latest ? "*" : "",
        HumanBytes(info.bytes), info.files.size(),
        info.integrity.ok() ? "ok" : "CORRUPT",
        info.integrity.ok() ? Summary(state)
                            : std::string(info.integrity.message()));
  }
  return absl::OkStatus();
}

absl::Status VerifyCheckpoints(CheckpointStore& store, const std::string& name,
                               const InspectOptions& o, std::ostream& out) {
  FEDBERRY_ASSIGN_OR_RETURN(auto all, Scan(store));
  std::vector<std::string> bad;
  std::string newest_valid;
  nlohmann::json j = nlohmann::json::array();
  bool found = name.empty();
  for (const auto& [info, state] : all) {
    if (info.integrity.ok() && newest_valid.empty()) newest_valid = info.name;
    if (!name.empty() && info.name != name) continue;
    found = true;
    if (!info.integrity.ok()) bad.push_back(info.name);
    if (o.json) {
      j.push_back(InfoJson(info, state));
    } else {
      out << info.name << ": "
          << (info.integrity.ok()
                  ? absl::StrCat("ok (", info.files.size(),
                                 " files, checksums match)")
                  : absl::StrCat("CORRUPT: ", info.integrity.message()))
          << "\n";
    }
  }
  if (!found) {
    return absl::NotFoundError(
        absl::StrCat("no checkpoint ", name, " in ", store.root()));
  }
  if (o.json) {
    out << j.dump(1) << "\n";
  } else {
    out << (newest_valid.empty()
                ? std::string("no valid checkpoint: a resume starts afresh")
                : absl::StrCat("a resume loads ", newest_valid))
        << "\n";
  }
  if (!bad.empty()) {
    return absl::DataLossError(
        absl::StrCat(bad.size(), " corrupt: ", absl::StrJoin(bad, ", ")));
  }
  return absl::OkStatus();
}

absl::Status ShowCheckpoint(CheckpointStore& store, const std::string& name,
                            const InspectOptions& o, std::ostream& out) {
  FEDBERRY_ASSIGN_OR_RETURN(auto all, Scan(store));
  const std::pair<CheckpointInfo, nlohmann::json>* pick = nullptr;
  for (const auto& entry : all) {
    const bool match =
        name.empty() ? entry.first.integrity.ok() : entry.first.name == name;
    if (match) {
      pick = &entry;
      break;
    }
  }
  if (pick == nullptr) {
    return absl::NotFoundError(
        name.empty()
            ? absl::StrCat("no valid checkpoint in ", store.root())
            : absl::StrCat("no checkpoint ", name, " in ", store.root()));
  }
  const auto& [info, state] = *pick;
  if (o.json) {
    out << InfoJson(info, state).dump(1) << "\n";
    return absl::OkStatus();
  }
  out << "checkpoint " << info.name << (info.latest ? " (LATEST)" : "")
      << " in " << store.root() << "\n";
  out << "  valid:  "
      << (info.integrity.ok() ? std::string("yes, every checksum matches")
                              : absl::StrCat("NO: ", info.integrity.message()))
      << "\n";
  out << "  size:   " << HumanBytes(info.bytes) << "\n";
  if (!state.empty()) {
    out << "  holds:  " << Summary(state) << "\n";
    for (const auto& [key, value] : state.items()) {
      out << absl::StrFormat("    %-18s %s\n", key, value.dump());
    }
  }
  out << "  files:\n";
  for (const auto& f : info.files) {
    out << absl::StrFormat("    %-14s %10d bytes  xxh3 %s\n", f.name, f.size,
                           f.xxh3);
  }
  return absl::OkStatus();
}

}  // namespace fedberry::checkpoint
