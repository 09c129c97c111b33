#include "client/client_args.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/flag_args.h"
#include "runtime/image_dataset.h"
#include "runtime/partition.h"
#include "runtime/periodic_sampler.h"

namespace fedberry::client {
namespace {

using base::FlagArgs;

// A memory level as ParseMemoryLevel reads it back exactly: a share always
// with a decimal point (a bare "1" would be one byte), a size in bytes,
// empty when unset.
std::string LevelText(const runtime::MemoryLevel& level) {
  if (level.fraction) {
    // The shortest text that reads back the same double; the parser takes
    // no exponent.
    std::string text = absl::UnparseFlag(*level.fraction);
    if (absl::StrContains(text, 'e')) {
      text = absl::StrFormat("%.17f", *level.fraction);
    }
    if (!absl::StrContains(text, '.')) text.append(".0");
    return text;
  }
  if (level.bytes) return absl::StrCat(*level.bytes);
  return "";
}

std::string RssText(const std::optional<uint64_t>& bytes) {
  return bytes ? absl::StrCat(*bytes) : "";
}

std::string WindowText(const std::optional<TrainWindow>& window) {
  return window ? window->ToString() : "";
}

// The connection and the board's data.
void AddBoard(const ClientConfig& c, const ClientConfig& b, FlagArgs& a) {
  const security::ClientTransportOptions& t = c.transport;
  a.Add("server", t.server, b.transport.server);
  a.Add("tls_ca", t.tls.ca, b.transport.tls.ca);
  a.Add("tls_cert", t.tls.cert, b.transport.tls.cert);
  a.Add("tls_key", t.tls.key, b.transport.tls.key);
  a.Add("tls_server_name", t.tls.server_name, b.transport.tls.server_name);
  a.Add("insecure", t.insecure, b.transport.insecure);
  a.Add("data", c.data.spec, b.data.spec);
  const runtime::PartitionSpec& p = c.data.partition;
  const runtime::PartitionSpec& bp = b.data.partition;
  a.Add("partition_index", p.index, bp.index);
  a.Add("partition_count", p.count, bp.count);
  a.Add("partition", std::string(runtime::PartitionKindName(p.kind)),
        std::string(runtime::PartitionKindName(bp.kind)));
  a.Add("alpha", p.alpha, bp.alpha);
  a.Add("partition_seed", p.seed, bp.seed);
  if (!c.data.cache_dir.empty()) {
    a.Add("cache_dir", c.data.cache_dir, DefaultCacheDir(c.checkpoint_dir));
  }
  a.Add("skip_bad_rows", c.skip_bad_rows, b.skip_bad_rows);
  a.Add("model_sha256", c.model_sha256, b.model_sha256);
}

// The agent's timing and its checkpoints.
void AddAgent(const ClientConfig& c, const ClientConfig& b, FlagArgs& a) {
  a.Add("threads", c.threads, b.threads);
  a.Add("name", c.name, b.name);
  a.Add("rpc_timeout", c.rpc_timeout, b.rpc_timeout);
  a.Add("max_backoff", c.max_backoff, b.max_backoff);
  a.Add("give_up_after", c.give_up_after, b.give_up_after);
  a.Add("clock_wait", c.clock_wait, b.clock_wait);
  a.Add("resource_sample_interval", c.resource_sample_interval,
        b.resource_sample_interval);
  a.Add("allow_data_moves", c.allow_data_moves, b.allow_data_moves);
  a.Add("server_ready_file", c.server_ready_file, b.server_ready_file);
  a.Add("checkpoint_dir", c.checkpoint_dir, b.checkpoint_dir);
  a.Add("checkpoint_every_batches", c.checkpoint.every_batches,
        b.checkpoint.every_batches);
  a.Add("checkpoint_every", c.checkpoint.every, b.checkpoint.every);
  a.Add("checkpoint_keep", c.checkpoint_keep, b.checkpoint_keep);
}

void AddEligibility(const EligibilityOptions& e, const EligibilityOptions& b,
                    FlagArgs& a) {
  a.Add("min_samples", e.min_samples, b.min_samples);
  a.Add("max_temperature", e.max_temperature, b.max_temperature);
  a.Add("thermal_file", e.thermal_file, b.thermal_file);
  a.Add("throttled_file", e.throttled_file, b.throttled_file);
  a.Add("decline_throttled", e.decline_throttled, b.decline_throttled);
  a.Add("pressure_cooldown", e.pressure_cooldown, b.pressure_cooldown);
  a.Add("train_window", WindowText(e.train_window), WindowText(b.train_window));
}

void AddLevels(const runtime::WatchdogOptions& w,
               const runtime::WatchdogOptions& b, FlagArgs& a) {
  a.Add("watchdog_soft_available", LevelText(w.soft_available),
        LevelText(b.soft_available));
  a.Add("watchdog_soft_psi", w.soft_psi_some10, b.soft_psi_some10);
  a.Add("watchdog_pause_available", LevelText(w.pause_available),
        LevelText(b.pause_available));
  a.Add("watchdog_pause_psi", w.pause_psi_some10, b.pause_psi_some10);
  a.Add("watchdog_pause_rss", RssText(w.pause_rss_bytes),
        RssText(b.pause_rss_bytes));
  a.Add("watchdog_resume_available", LevelText(w.resume_available),
        LevelText(b.resume_available));
  a.Add("watchdog_resume_psi", w.resume_psi_some10, b.resume_psi_some10);
  a.Add("watchdog_critical_available", LevelText(w.critical_available),
        LevelText(b.critical_available));
  a.Add("watchdog_critical_psi", w.critical_psi_full10, b.critical_psi_full10);
}

void AddWatchdog(const ClientConfig& c, const ClientConfig& b, FlagArgs& a) {
  a.Add("watchdog", c.watchdog, b.watchdog);
  a.Add("watchdog_poll_interval", c.watchdog_poll_interval,
        b.watchdog_poll_interval);
  const runtime::WatchdogOptions& w = c.watchdog_options;
  const runtime::WatchdogOptions& bw = b.watchdog_options;
  AddLevels(w, bw, a);
  a.Add("watchdog_soft_hold", w.soft_hold, bw.soft_hold);
  a.Add("watchdog_pause_hold", w.pause_hold, bw.pause_hold);
  a.Add("watchdog_resume_hold", w.resume_hold, bw.resume_hold);
  a.Add("watchdog_critical_hold", w.critical_hold, bw.critical_hold);
  a.Add("watchdog_release_after", w.release_after, bw.release_after);
  a.Add("watchdog_report_every", w.report_every, bw.report_every);
  a.Add("watchdog_micro_batches", w.soft_micro_batches, bw.soft_micro_batches);
  a.Add("watchdog_release", c.watchdog_release, b.watchdog_release);
  if (!c.criu_dir.empty()) {
    a.Add("criu_dir", c.criu_dir, DefaultCriuDir(c.checkpoint_dir));
  }
  a.Add("supervise", c.supervise, b.supervise);
  a.Add("supervise_max_restarts", c.supervise_max_restarts,
        b.supervise_max_restarts);
}

}  // namespace

std::string DefaultCacheDir(const std::string& checkpoint_dir) {
  if (!checkpoint_dir.empty()) return absl::StrCat(checkpoint_dir, "/cache");
  return (std::filesystem::temp_directory_path() / "fedberry-cache").string();
}

std::string DefaultCriuDir(const std::string& checkpoint_dir) {
  return absl::StrCat(checkpoint_dir, "/criu");
}

ClientConfig ClientFlagDefaults() {
  ClientConfig c;
  c.transport.server = kDefaultServer;
  c.data.spec = runtime::kDefaultFashionMnistDir;
  c.data.partition.seed = kDefaultPartitionSeed;
  c.resource_sample_interval = runtime::kDefaultSampleInterval;
  c.eligibility.max_temperature = kDefaultMaxTemperature;
  c.eligibility.pressure_cooldown = absl::ZeroDuration();
  return c;
}

std::vector<std::string> ClientArgsFrom(const ClientConfig& config) {
  const ClientConfig base = ClientFlagDefaults();
  std::vector<std::string> argv;
  FlagArgs a(argv);
  AddBoard(config, base, a);
  AddAgent(config, base, a);
  AddEligibility(config.eligibility, base.eligibility, a);
  AddWatchdog(config, base, a);
  return argv;
}

}  // namespace fedberry::client
