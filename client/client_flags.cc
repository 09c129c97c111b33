// fedberry-client's flags; client_flags.h says how they are read.
#include "client/client_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "client/client_args.h"
#include "runtime/image_dataset.h"
#include "runtime/periodic_sampler.h"
#include "runtime/sha256.h"

ABSL_FLAG(std::string, server, fedberry::client::kDefaultServer,
          "Server address host:port.");
ABSL_FLAG(std::string, data, fedberry::runtime::kDefaultFashionMnistDir,
          "This board's data: idx:DIR (train-*-idx*-ubyte[.gz]; a bare "
          "folder means idx), csv:FILE (a header row; the plan names the "
          "label and feature columns) or images:DIR (one sub-folder of "
          "PNG/JPEG files per class).");
ABSL_FLAG(bool, skip_bad_rows, false,
          "csv: skip malformed rows (counted in the log) instead of refusing "
          "the file.");
ABSL_FLAG(std::string, model_sha256, "",
          "Refuse any job whose model file does not have this SHA-256 "
          "(lowercase hex; e.g. from sha256sum model.pt).");
ABSL_FLAG(std::string, cache_dir, "",
          "Where the job's model file and derived data (a CSV's binary "
          "copy, decoded images) are cached when the data's folder cannot "
          "take them. Default: <checkpoint_dir>/cache, else "
          "$TMPDIR/fedberry-cache.");
ABSL_FLAG(int, partition_index, 0, "This board's shard, 0-based.");
ABSL_FLAG(int, partition_count, 1, "Number of shards the data is split into.");
ABSL_FLAG(std::string, partition, "iid", "Split: iid or dirichlet.");
ABSL_FLAG(double, alpha, 0.5, "Dirichlet concentration (non-IID skew).");
ABSL_FLAG(uint64_t, partition_seed, fedberry::client::kDefaultPartitionSeed,
          "Seed of the split; every board of a job must use the same.");
ABSL_FLAG(int, threads, 1, "LibTorch intra-op threads.");
ABSL_FLAG(std::string, name, "",
          "Stable client name (default: the name in --tls_cert, else "
          "hostname/partition index). Under mutual TLS it must be a name "
          "the certificate lists.");
ABSL_FLAG(std::string, tls_ca, "",
          "TLS: the fleet CA certificate (PEM) that signs the server's; "
          "the server's name is checked against the --server host (or "
          "--tls_server_name).");
ABSL_FLAG(std::string, tls_cert, "",
          "Mutual TLS: this board's certificate (PEM, e.g. from fedberry-pki "
          "board NAME). Re-read when the file changes.");
ABSL_FLAG(std::string, tls_key, "",
          "The private key of --tls_cert (PEM; keep it mode 0600).");
ABSL_FLAG(std::string, tls_server_name, "",
          "The name the server's certificate must list, when --server is "
          "an address it does not list (e.g. an IP address).");
ABSL_FLAG(bool, insecure, false,
          "Dial a non-loopback --server in plaintext (no TLS): trusted "
          "networks only.");
ABSL_FLAG(absl::Duration, rpc_timeout, absl::Seconds(60),
          "Deadline of join, model pull and update push calls.");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Folder for crash-safe training checkpoints; a restarted client "
          "resumes from it. Empty: no checkpoints.");
ABSL_FLAG(int, checkpoint_every_batches, 100,
          "Checkpoint every N batches (0: not by count).");
ABSL_FLAG(absl::Duration, checkpoint_every, absl::Seconds(60),
          "Checkpoint at least this often (0: not by time).");
ABSL_FLAG(int, checkpoint_keep, 3, "Newest checkpoints kept.");
ABSL_FLAG(absl::Duration, max_backoff, absl::Seconds(30),
          "Longest wait between reconnection attempts.");
ABSL_FLAG(absl::Duration, resource_sample_interval,
          fedberry::runtime::kDefaultSampleInterval,
          "How often to sample this process's memory during a round (for the "
          "round's peak RSS); 0 = only at round ends.");
ABSL_FLAG(bool, allow_data_moves, false,
          "Trusted clusters only: let a server running with --data_moves "
          "move some of this board's training samples to other boards for "
          "a round, and train on samples it moves here. Off: no sample "
          "ever leaves this board.");
ABSL_FLAG(absl::Duration, give_up_after, absl::ZeroDuration(),
          "Exit when the server stays unreachable this long (0: never).");
ABSL_FLAG(absl::Duration, clock_wait, absl::Minutes(15),
          "While this board's clock is before this build's date or its "
          "certificates' notBefore (a board without a real-time clock that "
          "NTP has not set yet), wait this long for it to be set, looking "
          "every 5s and saying so, then exit with status 1 (0: do not wait; "
          "inf: wait as long as it takes).");
ABSL_FLAG(std::string, server_ready_file, "",
          "Dial --server only once this file exists: a launcher that starts "
          "the server with its boards points it at the server's "
          "<output>/server.addr (written once it listens), so boards load "
          "while the server loads and do not back off. Waits at most "
          "--give_up_after (when set).");

ABSL_FLAG(uint64_t, min_samples, 0,
          "Board-side eligibility: sit rounds out while this board holds "
          "fewer training samples than this (0: off).");
ABSL_FLAG(double, max_temperature, fedberry::client::kDefaultMaxTemperature,
          "Sit rounds out while the SoC is hotter than this, in degrees C "
          "(0: off; default 70 on ARM builds, off on others).");
ABSL_FLAG(std::string, thermal_file, fedberry::client::kDefaultThermalFile,
          "The SoC temperature in millidegrees C, as the kernel writes it "
          "(absent: no reading, no decline).");
ABSL_FLAG(std::string, throttled_file, fedberry::client::kDefaultThrottledFile,
          "The Raspberry Pi firmware's throttled flags (hex, as vcgencmd "
          "get_throttled gives them; absent: no reading).");
ABSL_FLAG(bool, decline_throttled, true,
          "Sit rounds out while the firmware reports under-voltage (which "
          "corrupts SD cards) or throttling now.");
// Off by default: the watchdog pausing the board's own training is the
// watchdog doing its job, and sitting the next rounds out for it would stall
// a small fleet; set it where other work on the board needs its memory.
ABSL_FLAG(absl::Duration, pressure_cooldown, absl::ZeroDuration(),
          "Sit rounds out this long after the memory watchdog last paused "
          "training (0: off).");
ABSL_FLAG(std::string, train_window, "",
          "Train only between these local times, HH:MM-HH:MM (may wrap "
          "midnight, e.g. 22:00-06:00); empty: at any time.");

ABSL_FLAG(bool, watchdog, true,
          "Watch memory pressure while training: shrink batches, pause, and "
          "release memory before the OOM killer acts.");
ABSL_FLAG(absl::Duration, watchdog_poll_interval, absl::Seconds(1),
          "How often the watchdog reads PSI, MemAvailable, RSS and the "
          "cgroup.");
ABSL_FLAG(std::string, watchdog_soft_available, "25%",
          "Soft pressure below this available memory (share like 25% or a "
          "size like 250MiB): batches are split into micro-batches.");
ABSL_FLAG(double, watchdog_soft_psi, 5,
          "Soft pressure at this PSI 'some' avg10 (% of time stalled).");
ABSL_FLAG(std::string, watchdog_pause_available, "15%",
          "Pause training below this available memory.");
ABSL_FLAG(double, watchdog_pause_psi, 10,
          "Pause training at this PSI 'some' avg10 (%).");
ABSL_FLAG(std::string, watchdog_pause_rss, "",
          "Pause when this process's RSS exceeds this size (empty: off).");
ABSL_FLAG(std::string, watchdog_resume_available, "25%",
          "Low-water mark: resume (and restore whole batches) only with at "
          "least this much available.");
ABSL_FLAG(double, watchdog_resume_psi, 2,
          "Low-water mark: resume only at or below this PSI 'some' avg10 (%).");
ABSL_FLAG(std::string, watchdog_critical_available, "5%",
          "Critical: release memory at once below this available memory.");
ABSL_FLAG(double, watchdog_critical_psi, 40,
          "Critical: release memory at once at this PSI 'full' avg10 (%).");
ABSL_FLAG(absl::Duration, watchdog_soft_hold, absl::Seconds(2),
          "Soft pressure must last this long to shrink batches.");
ABSL_FLAG(absl::Duration, watchdog_pause_hold, absl::Seconds(3),
          "High pressure must last this long to pause.");
ABSL_FLAG(absl::Duration, watchdog_resume_hold, absl::Seconds(10),
          "The low-water marks must hold this long to resume.");
ABSL_FLAG(absl::Duration, watchdog_critical_hold, absl::ZeroDuration(),
          "Critical pressure must last this long to release.");
ABSL_FLAG(absl::Duration, watchdog_release_after, absl::Seconds(60),
          "Paused this long without relief: checkpoint and release memory.");
ABSL_FLAG(absl::Duration, watchdog_report_every, absl::Seconds(30),
          "While paused, log the readings that hold the pause this often.");
ABSL_FLAG(int, watchdog_micro_batches, 2,
          "Micro-batches per batch under soft pressure (gradient "
          "accumulation keeps the effective batch).");
ABSL_FLAG(std::string, watchdog_release, "exit",
          "How memory is released: exit (checkpoint, exit with status 75 for "
          "a supervisor to restart), criu (checkpoint, then a CRIU dump to "
          "disk by --supervise's supervisor, restored once memory is back; "
          "exit where `criu check` fails or without --supervise), or off "
          "(pause only).");
ABSL_FLAG(std::string, criu_dir, "",
          "Where CRIU dumps go (must be on disk, not tmpfs); default "
          "<checkpoint_dir>/criu.");
ABSL_FLAG(bool, supervise, false,
          "Run the client as a child and restart it after it released its "
          "memory (exit status 75), once memory is back; with "
          "--watchdog_release=criu, dump and restore it with CRIU instead.");
ABSL_FLAG(int, supervise_max_restarts, 0,
          "Give up after this many restarts or CRIU restores (0: no limit).");

namespace fedberry::client {
namespace {

// A memory level flag ("25%", "250MiB", empty: unset); InvalidArgument
// naming the flag.
absl::StatusOr<runtime::MemoryLevel> LevelFlag(
    const absl::Flag<std::string>& flag, const char* name) {
  auto level = runtime::ParseMemoryLevel(absl::GetFlag(flag));
  if (!level.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": ", level.status().message()));
  }
  return level;
}

absl::StatusOr<runtime::WatchdogOptions> WatchdogOptionsFromFlags() {
  runtime::WatchdogOptions o;
  FEDBERRY_ASSIGN_OR_RETURN(
      o.soft_available,
      LevelFlag(FLAGS_watchdog_soft_available, "watchdog_soft_available"));
  FEDBERRY_ASSIGN_OR_RETURN(
      o.pause_available,
      LevelFlag(FLAGS_watchdog_pause_available, "watchdog_pause_available"));
  FEDBERRY_ASSIGN_OR_RETURN(
      o.resume_available,
      LevelFlag(FLAGS_watchdog_resume_available, "watchdog_resume_available"));
  FEDBERRY_ASSIGN_OR_RETURN(o.critical_available,
                            LevelFlag(FLAGS_watchdog_critical_available,
                                      "watchdog_critical_available"));
  FEDBERRY_ASSIGN_OR_RETURN(
      runtime::MemoryLevel rss,
      LevelFlag(FLAGS_watchdog_pause_rss, "watchdog_pause_rss"));
  if (rss.fraction) {
    return absl::InvalidArgumentError("--watchdog_pause_rss takes a size");
  }
  o.pause_rss_bytes = rss.bytes;
  o.soft_psi_some10 = absl::GetFlag(FLAGS_watchdog_soft_psi);
  o.pause_psi_some10 = absl::GetFlag(FLAGS_watchdog_pause_psi);
  o.resume_psi_some10 = absl::GetFlag(FLAGS_watchdog_resume_psi);
  o.critical_psi_full10 = absl::GetFlag(FLAGS_watchdog_critical_psi);
  o.soft_hold = absl::GetFlag(FLAGS_watchdog_soft_hold);
  o.pause_hold = absl::GetFlag(FLAGS_watchdog_pause_hold);
  o.resume_hold = absl::GetFlag(FLAGS_watchdog_resume_hold);
  o.critical_hold = absl::GetFlag(FLAGS_watchdog_critical_hold);
  o.release_after = absl::GetFlag(FLAGS_watchdog_release_after);
  o.report_every = absl::GetFlag(FLAGS_watchdog_report_every);
  o.soft_micro_batches = absl::GetFlag(FLAGS_watchdog_micro_batches);
  FEDBERRY_RETURN_IF_ERROR(runtime::ValidateWatchdogOptions(o));
  return o;
}

// The eligibility rules as the flags set them.
absl::StatusOr<EligibilityOptions> EligibilityOptionsFromFlags() {
  EligibilityOptions o;
  o.min_samples = absl::GetFlag(FLAGS_min_samples);
  o.max_temperature = absl::GetFlag(FLAGS_max_temperature);
  o.thermal_file = absl::GetFlag(FLAGS_thermal_file);
  o.throttled_file = absl::GetFlag(FLAGS_throttled_file);
  o.decline_throttled = absl::GetFlag(FLAGS_decline_throttled);
  o.pressure_cooldown = absl::GetFlag(FLAGS_pressure_cooldown);
  auto window = ParseTrainWindow(absl::GetFlag(FLAGS_train_window));
  if (!window.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--train_window: ", window.status().message()));
  }
  o.train_window = *window;
  FEDBERRY_RETURN_IF_ERROR(ValidateEligibilityOptions(o));
  return o;
}

// This board's data and shard; the cache folder resolved.
absl::Status ReadBoardFlags(ClientConfig& c) {
  runtime::PartitionSpec& partition = c.data.partition;
  FEDBERRY_ASSIGN_OR_RETURN(
      partition.kind,
      runtime::ParsePartitionKind(absl::GetFlag(FLAGS_partition)));
  partition.index = absl::GetFlag(FLAGS_partition_index);
  partition.count = absl::GetFlag(FLAGS_partition_count);
  partition.alpha = absl::GetFlag(FLAGS_alpha);
  partition.seed = absl::GetFlag(FLAGS_partition_seed);
  c.model_sha256 = absl::GetFlag(FLAGS_model_sha256);
  if (!c.model_sha256.empty() && !runtime::IsSha256Hex(c.model_sha256)) {
    return absl::InvalidArgumentError(
        "--model_sha256 must be 64 lowercase hex digits");
  }
  c.data.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  if (c.data.cache_dir.empty()) {
    c.data.cache_dir = DefaultCacheDir(c.checkpoint_dir);
  }
  c.data.spec = absl::GetFlag(FLAGS_data);
  c.skip_bad_rows = absl::GetFlag(FLAGS_skip_bad_rows);
  return absl::OkStatus();
}

// The connection, the agent's timing and the checkpoints.
void ReadAgentFlags(ClientConfig& c) {
  c.transport = {
      absl::GetFlag(FLAGS_server),
      {absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
       absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_tls_server_name)},
      absl::GetFlag(FLAGS_insecure)};
  c.threads = absl::GetFlag(FLAGS_threads);
  c.name = absl::GetFlag(FLAGS_name);
  c.rpc_timeout = absl::GetFlag(FLAGS_rpc_timeout);
  c.max_backoff = absl::GetFlag(FLAGS_max_backoff);
  c.give_up_after = absl::GetFlag(FLAGS_give_up_after);
  c.clock_wait = absl::GetFlag(FLAGS_clock_wait);
  c.resource_sample_interval = absl::GetFlag(FLAGS_resource_sample_interval);
  c.allow_data_moves = absl::GetFlag(FLAGS_allow_data_moves);
  c.server_ready_file = absl::GetFlag(FLAGS_server_ready_file);
  c.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  c.checkpoint_keep = absl::GetFlag(FLAGS_checkpoint_keep);
  c.checkpoint.every_batches = absl::GetFlag(FLAGS_checkpoint_every_batches);
  c.checkpoint.every = absl::GetFlag(FLAGS_checkpoint_every);
}

// The watchdog and the supervisor; their levels are read only when one of
// them runs, so a level of a watchdog that is off is not refused.
absl::Status ReadWatchdogFlags(ClientConfig& c) {
  c.watchdog = absl::GetFlag(FLAGS_watchdog);
  c.watchdog_poll_interval = absl::GetFlag(FLAGS_watchdog_poll_interval);
  c.watchdog_release = absl::GetFlag(FLAGS_watchdog_release);
  c.criu_dir = absl::GetFlag(FLAGS_criu_dir).empty()
                   ? DefaultCriuDir(c.checkpoint_dir)
                   : absl::GetFlag(FLAGS_criu_dir);
  c.supervise = absl::GetFlag(FLAGS_supervise);
  c.supervise_max_restarts = absl::GetFlag(FLAGS_supervise_max_restarts);
  if (c.watchdog || c.supervise) {
    FEDBERRY_ASSIGN_OR_RETURN(c.watchdog_options, WatchdogOptionsFromFlags());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClientConfig> ClientConfigFromFlags() {
  ClientConfig config;
  ReadAgentFlags(config);  // first: the data's cache needs checkpoint_dir
  FEDBERRY_RETURN_IF_ERROR(ReadBoardFlags(config));
  FEDBERRY_RETURN_IF_ERROR(ReadWatchdogFlags(config));
  FEDBERRY_ASSIGN_OR_RETURN(config.eligibility, EligibilityOptionsFromFlags());
  return config;
}

}  // namespace fedberry::client
