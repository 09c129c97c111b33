#include "checkpoint/checkpoint_store.h"

#include <xxhash.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "checkpoint/kill_point.h"

namespace fedberry::checkpoint {
namespace {

constexpr char kPrefix[] = "ckpt-";
constexpr char kTmpSuffix[] = ".tmp";
constexpr char kManifest[] = "MANIFEST";
constexpr char kLatest[] = "LATEST";
constexpr char kFormatName[] = "fedberry-checkpoint";

absl::Status Annotate(const absl::Status& s, absl::string_view step) {
  return absl::Status(s.code(), absl::StrCat(step, ": ", s.message()));
}

std::string EncodeManifest(const std::vector<ManifestEntry>& entries) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& e : entries) {
    files.push_back({{"name", e.name}, {"size", e.size}, {"xxh3", e.xxh3}});
  }
  nlohmann::json j = {
      {"format", kFormatName}, {"version", kFormatVersion}, {"files", files}};
  std::string body = j.dump() + "\n";
  return absl::StrCat(body, "xxh3:", Checksum(body), "\n");
}

absl::StatusOr<std::vector<ManifestEntry>> DecodeManifest(
    const std::string& text, const std::string& where) {
  const size_t tail = text.rfind("xxh3:");
  if (tail == std::string::npos || tail == 0) {
    return absl::DataLossError(
        absl::StrCat(where, ": MANIFEST is truncated (no checksum line)"));
  }
  const std::string body = text.substr(0, tail);
  std::string sum = text.substr(tail + 5);
  while (!sum.empty() && sum.back() == '\n') sum.pop_back();
  if (sum != Checksum(body)) {
    return absl::DataLossError(
        absl::StrCat(where, ": MANIFEST checksum does not match its content"));
  }
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() ||
      j.value("format", "") != kFormatName) {
    return absl::DataLossError(absl::StrCat(
        where, ": MANIFEST is not a fedberry checkpoint manifest"));
  }
  const int version = j.value("version", -1);
  if (version != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": checkpoint format version ", version,
                     " is not supported by this build (it reads version ",
                     kFormatVersion, ")"));
  }
  std::vector<ManifestEntry> out;
  for (const auto& f : j.value("files", nlohmann::json::array())) {
    ManifestEntry e;
    e.name = f.value("name", "");
    e.size = f.value("size", uint64_t{0});
    e.xxh3 = f.value("xxh3", "");
    out.push_back(std::move(e));
  }
  return out;
}

bool ParseName(absl::string_view name, uint64_t* seq, bool* tmp) {
  if (!absl::ConsumePrefix(&name, kPrefix)) return false;
  *tmp = absl::ConsumeSuffix(&name, kTmpSuffix);
  return absl::SimpleAtoi(name, seq);
}

}  // namespace

std::string Checksum(absl::string_view data) {
  return absl::StrFormat("%016x", XXH3_64bits(data.data(), data.size()));
}

CheckpointStore::CheckpointStore(std::string root, base::FileSystem& fs,
                                 StoreOptions options)
    : root_(std::move(root)), fs_(fs), options_(options) {
  options_.keep = std::max(1, options_.keep);
}

std::string CheckpointStore::Path(const std::string& name) const {
  return absl::StrCat(root_, "/", name);
}

absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>>
CheckpointStore::Scan(bool include_tmp) {
  std::vector<std::pair<uint64_t, std::string>> out;
  auto names = fs_.ListDir(root_);
  if (absl::IsNotFound(names.status())) return out;
  if (!names.ok()) return names.status();
  for (const auto& n : *names) {
    uint64_t seq;
    bool tmp;
    if (ParseName(n, &seq, &tmp) && (include_tmp || !tmp)) {
      out.emplace_back(seq, n);
    }
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

absl::Status CheckpointStore::WriteCheckpoint(
    const std::string& tmp, const std::string& dir,
    const std::vector<CheckpointFile>& files) {
  FEDBERRY_RETURN_IF_ERROR(
      Annotate(fs_.CreateDir(tmp), "creating the checkpoint"));
  std::vector<ManifestEntry> entries;
  for (const auto& f : files) {
    KillPoint("ckpt.before_file");
    FEDBERRY_RETURN_IF_ERROR(Annotate(
        base::WriteFileSynced(fs_, absl::StrCat(tmp, "/", f.name), f.bytes),
        absl::StrCat("writing ", f.name)));
    entries.push_back({f.name, f.bytes.size(), Checksum(f.bytes)});
  }
  KillPoint("ckpt.before_manifest");
  FEDBERRY_RETURN_IF_ERROR(
      Annotate(base::WriteFileSynced(fs_, absl::StrCat(tmp, "/", kManifest),
                                     EncodeManifest(entries)),
               "writing the manifest"));
  FEDBERRY_RETURN_IF_ERROR(
      Annotate(fs_.SyncDir(tmp), "syncing the checkpoint folder"));
  KillPoint("ckpt.before_rename");
  FEDBERRY_RETURN_IF_ERROR(
      Annotate(fs_.Rename(tmp, dir), "renaming into place"));
  KillPoint("ckpt.before_sync_root");
  return Annotate(fs_.SyncDir(root_), "syncing the checkpoint root");
}

absl::Status CheckpointStore::PointLatestTo(const std::string& name) {
  const std::string tmp = Path(absl::StrCat(kLatest, kTmpSuffix));
  KillPoint("ckpt.before_latest");
  absl::Status s = base::WriteFileSynced(fs_, tmp, name + "\n");
  if (s.ok()) s = fs_.Rename(tmp, Path(kLatest));
  if (s.ok()) {
    KillPoint("ckpt.before_latest_sync");
    s = fs_.SyncDir(root_);
  }
  if (!s.ok()) fs_.RemoveFile(tmp).IgnoreError();
  return Annotate(s, "updating LATEST");
}

absl::StatusOr<std::string> CheckpointStore::Save(
    const std::vector<CheckpointFile>& files) {
  for (const auto& f : files) {
    if (f.name.empty() || absl::StrContains(f.name, "/") ||
        f.name == kManifest || f.name == "." || f.name == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid checkpoint file name '", f.name, "'"));
    }
  }
  if (absl::Status s = fs_.CreateDir(root_); !s.ok()) {
    return absl::Status(
        s.code(),
        absl::StrCat("checkpoint in ", root_,
                     " abandoned while creating the folder: ", s.message()));
  }
  FEDBERRY_ASSIGN_OR_RETURN(auto existing, Scan(/*include_tmp=*/true));
  const uint64_t seq = existing.empty() ? 1 : existing.front().first + 1;
  const std::string name = absl::StrFormat("%s%08d", kPrefix, seq);
  const std::string tmp = Path(name + kTmpSuffix), dir = Path(name);
  absl::Status s = WriteCheckpoint(tmp, dir, files);
  if (s.ok()) s = PointLatestTo(name);
  if (!s.ok()) {
    // Abandon it whole, so the previous checkpoint stays the newest.
    fs_.RemoveAll(tmp).IgnoreError();
    fs_.RemoveAll(dir).IgnoreError();
    return absl::Status(s.code(),
                        absl::StrCat("checkpoint ", name, " in ", root_,
                                     " abandoned while ", s.message()));
  }
  Retain(seq);
  return name;
}

void CheckpointStore::Retain(uint64_t newest) {
  auto all = Scan(/*include_tmp=*/true);
  if (!all.ok()) return;
  int kept = 0;
  for (const auto& [seq, name] : *all) {
    const bool tmp = absl::EndsWith(name, kTmpSuffix);
    // Leftover temp folders are from writes that crashed.
    if (tmp || (seq <= newest && ++kept > options_.keep)) {
      fs_.RemoveAll(Path(name)).IgnoreError();
    }
  }
}

absl::StatusOr<LoadedCheckpoint> CheckpointStore::Load(
    const std::string& name) {
  const std::string dir = Path(name);
  const std::string where = absl::StrCat("checkpoint ", dir);
  auto manifest_text = fs_.ReadFile(absl::StrCat(dir, "/", kManifest));
  if (!manifest_text.ok()) {
    if (absl::IsNotFound(manifest_text.status()) && !fs_.Exists(dir)) {
      return absl::NotFoundError(absl::StrCat(where, " does not exist"));
    }
    return absl::DataLossError(
        absl::StrCat(where, " has no readable MANIFEST (torn write?): ",
                     manifest_text.status().message()));
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<ManifestEntry> entries,
                            DecodeManifest(*manifest_text, where));
  LoadedCheckpoint out;
  out.name = name;
  bool tmp;
  ParseName(name, &out.seq, &tmp);
  for (const auto& e : entries) {
    auto bytes = fs_.ReadFile(absl::StrCat(dir, "/", e.name));
    if (!bytes.ok()) {
      return absl::DataLossError(absl::StrCat(
          where, ": file ", e.name,
          " is missing or unreadable: ", bytes.status().message()));
    }
    if (bytes->size() != e.size) {
      return absl::DataLossError(
          absl::StrCat(where, ": file ", e.name, " has ", bytes->size(),
                       " bytes; the manifest says ", e.size, " (truncated?)"));
    }
    if (Checksum(*bytes) != e.xxh3) {
      return absl::DataLossError(absl::StrCat(where, ": file ", e.name,
                                              " fails its checksum (corrupt)"));
    }
    out.files[e.name] = *std::move(bytes);
  }
  return out;
}

absl::StatusOr<LoadedCheckpoint> CheckpointStore::LoadLatest() {
  FEDBERRY_ASSIGN_OR_RETURN(auto all, Scan(/*include_tmp=*/false));
  std::vector<absl::Status> skipped;
  for (const auto& [seq, name] : all) {
    auto loaded = Load(name);
    if (loaded.ok()) {
      loaded->skipped = std::move(skipped);
      return loaded;
    }
    skipped.push_back(loaded.status());
  }
  if (skipped.empty()) {
    return absl::NotFoundError(absl::StrCat("no checkpoint in ", root_));
  }
  std::string why;
  for (const auto& s : skipped) absl::StrAppend(&why, "; ", s.message());
  return absl::DataLossError(
      absl::StrCat("no valid checkpoint in ", root_, why));
}

absl::StatusOr<std::vector<CheckpointInfo>> CheckpointStore::List() {
  FEDBERRY_ASSIGN_OR_RETURN(auto all, Scan(/*include_tmp=*/false));
  std::string latest;
  if (auto l = fs_.ReadFile(Path(kLatest)); l.ok()) {
    latest = *l;
    while (!latest.empty() && latest.back() == '\n') latest.pop_back();
  }
  std::vector<CheckpointInfo> out;
  for (const auto& [seq, name] : all) {
    CheckpointInfo info;
    info.name = name;
    info.seq = seq;
    info.latest = name == latest;
    auto loaded = Load(name);
    info.integrity = loaded.status();
    if (auto m = fs_.ReadFile(absl::StrCat(Path(name), "/", kManifest));
        m.ok()) {
      if (auto entries = DecodeManifest(*m, name); entries.ok()) {
        info.files = *entries;
        for (const auto& e : info.files) info.bytes += e.size;
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace fedberry::checkpoint
