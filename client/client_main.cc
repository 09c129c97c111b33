// fedberry-client: the device agent that trains on this board's data.
#include <ATen/Parallel.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/board_data.h"
#include "client/client_agent.h"
#include "client/criu_adapter.h"
#include "client/criu_signals.h"
#include "client/eligibility.h"
#include "client/fleet_emulation.h"
#include "client/identity_refusal.h"
#include "client/memory_release.h"
#include "client/plan_trainer.h"
#include "client/release_mode.h"
#include "client/round_meter.h"
#include "client/server_ready_file.h"
#include "client/supervisor.h"
#include "client/update_attack.h"
#include "client/watchdog_gate.h"
#include "proto/wire.h"
#include "runtime/command_line.h"
#include "runtime/compute_kernels.h"
#include "runtime/device_facts.h"
#include "runtime/heap_tuning.h"
#include "runtime/image_dataset.h"
#include "runtime/lock_checks.h"
#include "runtime/memory_readings.h"
#include "runtime/periodic_sampler.h"
#include "runtime/resource_monitor.h"
#include "runtime/sha256.h"
#include "runtime/shutdown_signal.h"
#include "runtime/status_macros.h"
#include "runtime/watchdog.h"
#include "security/transport.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "Server address host:port.");
ABSL_FLAG(std::string, data, fedberry::runtime::kDefaultFashionMnistDir,
          "This board's data: idx:DIR (train-*-idx*-ubyte[.gz]; a bare "
          "folder means idx), csv:FILE (a header row; the plan names the "
          "label and feature columns) or images:DIR (one sub-folder of "
          "PNG/JPEG files per class).");
ABSL_FLAG(bool, skip_bad_rows, false,
          "csv: skip malformed rows (counted in the log) instead of refusing "
          "the file.");
ABSL_FLAG(std::string, attack, "",
          "Test only, to measure robust aggregation: send poisoned updates, "
          "global + F * (trained - global). scale:F, signflip (F = -1) or "
          "signflip:F (F negated).");
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
ABSL_FLAG(uint64_t, partition_seed, 42,
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
ABSL_FLAG(double, compute_slowdown, 1.0,
          "Fleet emulation: behave like a board this many times slower "
          "(sleeps (k-1)x each round's training time; >= 1).");
ABSL_FLAG(double, data_fraction, 1.0,
          "Fleet emulation: keep only this share of the shard, in (0, 1].");
ABSL_FLAG(bool, allow_data_moves, false,
          "Trusted clusters only: let a server running with --data_moves "
          "move some of this board's training samples to other boards for "
          "a round, and train on samples it moves here. Off: no sample "
          "ever leaves this board.");
ABSL_FLAG(absl::Duration, give_up_after, absl::ZeroDuration(),
          "Exit when the server stays unreachable this long (0: never).");
ABSL_FLAG(std::string, server_ready_file, "",
          "Dial --server only once this file exists: a launcher that starts "
          "the server with its boards points it at the server's "
          "<output>/server.addr (written once it listens), so boards load "
          "while the server loads and do not back off. Waits at most "
          "--give_up_after (when set).");

ABSL_FLAG(uint64_t, min_samples, 0,
          "Board-side eligibility: sit rounds out while this board holds "
          "fewer training samples than this (0: off).");
// A Pi 3 B+ throttles from 60 C and hard-limits at 80 C; a PC's sensors say
// nothing of a board, and an emulated fleet must not sit out on them.
#if defined(__aarch64__) || defined(__arm__)
constexpr double kDefaultMaxTemperature = 70;
#else
constexpr double kDefaultMaxTemperature = 0;
#endif
ABSL_FLAG(double, max_temperature, kDefaultMaxTemperature,
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

using namespace fedberry;

namespace {

absl::StatusOr<runtime::WatchdogOptions> WatchdogOptionsFromFlags() {
  runtime::WatchdogOptions o;
  const auto level =
      [](const absl::Flag<std::string>& flag,
         const char* name) -> absl::StatusOr<runtime::MemoryLevel> {
    auto l = runtime::ParseMemoryLevel(absl::GetFlag(flag));
    if (!l.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": ", l.status().message()));
    }
    return l;
  };
  ASSIGN_OR_RETURN(o.soft_available, level(FLAGS_watchdog_soft_available,
                                           "watchdog_soft_available"));
  ASSIGN_OR_RETURN(o.pause_available, level(FLAGS_watchdog_pause_available,
                                            "watchdog_pause_available"));
  ASSIGN_OR_RETURN(o.resume_available, level(FLAGS_watchdog_resume_available,
                                             "watchdog_resume_available"));
  ASSIGN_OR_RETURN(
      o.critical_available,
      level(FLAGS_watchdog_critical_available, "watchdog_critical_available"));
  ASSIGN_OR_RETURN(runtime::MemoryLevel rss,
                   level(FLAGS_watchdog_pause_rss, "watchdog_pause_rss"));
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
  RETURN_IF_ERROR(runtime::ValidateWatchdogOptions(o));
  return o;
}

std::string CriuImagesDir() {
  return absl::GetFlag(FLAGS_criu_dir).empty()
             ? absl::GetFlag(FLAGS_checkpoint_dir) + "/criu"
             : absl::GetFlag(FLAGS_criu_dir);
}

// --supervise: this process only restarts the client (itself, without
// --supervise) after memory releases.
int Supervise(int argc, char** argv) {
  auto levels = WatchdogOptionsFromFlags();
  if (!levels.ok()) {
    spdlog::error("{}", std::string(levels.status().message()));
    return 2;
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  client::SupervisorOptions options;
  options.argv.push_back(n > 0 ? std::string(self, n) : std::string(argv[0]));
  for (int i = 1; i < argc; ++i) options.argv.push_back(argv[i]);
  options.argv.push_back("--supervise=false");  // the last one wins
  options.release_exit_code = client::kMemoryReleaseExitCode;
  options.levels = *levels;
  options.max_restarts = absl::GetFlag(FLAGS_supervise_max_restarts);
  options.poll = absl::GetFlag(FLAGS_watchdog_poll_interval);
  options.report_every = levels->report_every;
  runtime::MemoryReader reader(runtime::ProcFiles::Real());
  options.read = [&reader] { return reader.Read(); };
  // A CRIU release is this process's job: it runs criu on the client.
  std::unique_ptr<client::CriuAdapter> criu;
  if (absl::GetFlag(FLAGS_watchdog) &&
      absl::GetFlag(FLAGS_watchdog_release) == "criu" &&
      !absl::GetFlag(FLAGS_checkpoint_dir).empty()) {
    criu = std::make_unique<client::CriuAdapter>(
        client::CriuOptions{"criu", CriuImagesDir(), /*shell_job=*/true});
    absl::Status usable = criu->Check();
    auto tmpfs = client::OnMemoryFileSystem(CriuImagesDir());
    if (usable.ok() && tmpfs.ok() && *tmpfs) {
      usable = absl::FailedPreconditionError(
          absl::StrCat("images folder ", CriuImagesDir(),
                       " is on tmpfs, where a dump frees nothing"));
    }
    if (usable.ok()) {
      spdlog::info(
          "supervisor: CRIU works here; memory releases are CRIU dumps to {}",
          CriuImagesDir());
      options.criu = criu.get();
    } else {
      spdlog::warn(
          "supervisor: CRIU cannot work here ({}); memory releases use "
          "checkpoint-and-exit instead",
          std::string(usable.message()));
    }
  }
  client::Supervisor supervisor(options);
  ShutdownSignal signal([&](int sig) {
    spdlog::warn("supervisor: signal {} received: stopping the client", sig);
    supervisor.Stop(sig);
  });
  std::optional<client::DumpRequestListener> dump_requests;
  if (options.criu != nullptr) {
    dump_requests.emplace([&](pid_t from) { supervisor.RequestDump(from); });
  }
  return supervisor.Run();
}

// This board's data and shard, as the flags give them.
struct BoardConfig {
  runtime::PartitionSpec partition;
  std::string model_sha256;  // --model_sha256; empty: any
  std::string cache_dir;
  client::BoardDataOptions data;
};

// InvalidArgument naming the flag that is wrong.
absl::StatusOr<BoardConfig> BoardConfigFromFlags() {
  BoardConfig board;
  ASSIGN_OR_RETURN(board.partition.kind,
                   runtime::ParsePartitionKind(absl::GetFlag(FLAGS_partition)));
  board.partition.index = absl::GetFlag(FLAGS_partition_index);
  board.partition.count = absl::GetFlag(FLAGS_partition_count);
  board.partition.alpha = absl::GetFlag(FLAGS_alpha);
  board.partition.seed = absl::GetFlag(FLAGS_partition_seed);
  board.model_sha256 = absl::GetFlag(FLAGS_model_sha256);
  if (!board.model_sha256.empty() &&
      !runtime::IsSha256Hex(board.model_sha256)) {
    return absl::InvalidArgumentError(
        "--model_sha256 must be 64 lowercase hex digits");
  }
  if (!(absl::GetFlag(FLAGS_compute_slowdown) >= 1)) {
    return absl::InvalidArgumentError("--compute_slowdown must be >= 1");
  }
  board.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  if (board.cache_dir.empty()) {
    board.cache_dir =
        !absl::GetFlag(FLAGS_checkpoint_dir).empty()
            ? absl::StrCat(absl::GetFlag(FLAGS_checkpoint_dir), "/cache")
            : (std::filesystem::temp_directory_path() / "fedberry-cache")
                  .string();
  }
  board.data.spec = absl::GetFlag(FLAGS_data);
  board.data.partition = board.partition;
  board.data.fraction = absl::GetFlag(FLAGS_data_fraction);
  board.data.cache_dir = board.cache_dir;
  return board;
}

// The agent's settings from the flags, the board and its transport.
client::AgentOptions AgentOptionsFromFlags(
    const BoardConfig& board, const security::ClientTransport& transport) {
  client::AgentOptions options;
  options.device = client::ToDeviceInfo(
      runtime::ReadDeviceFacts(runtime::ProcFiles::Real()));
  options.name = absl::GetFlag(FLAGS_name);
  if (options.name.empty()) {
    options.name = !transport.certificate_name.empty()
                       ? transport.certificate_name
                       : absl::StrCat(options.device.hostname(), "/",
                                      board.partition.index);
  }
  options.rpc_timeout = absl::GetFlag(FLAGS_rpc_timeout);
  options.probe_transport = transport.probe;
  options.give_up_after = absl::GetFlag(FLAGS_give_up_after);
  options.allow_data_moves = absl::GetFlag(FLAGS_allow_data_moves);
  options.backoff.max = absl::GetFlag(FLAGS_max_backoff);
  options.model_cache_dir = absl::StrCat(board.cache_dir, "/models");
  options.required_model_sha256 = board.model_sha256;
  options.seed = static_cast<uint64_t>(getpid());
  return options;
}

// The eligibility rules as the flags set them; InvalidArgument naming the
// flag that is wrong.
absl::StatusOr<client::EligibilityOptions> EligibilityOptionsFromFlags() {
  client::EligibilityOptions o;
  o.min_samples = absl::GetFlag(FLAGS_min_samples);
  o.max_temperature = absl::GetFlag(FLAGS_max_temperature);
  o.thermal_file = absl::GetFlag(FLAGS_thermal_file);
  o.throttled_file = absl::GetFlag(FLAGS_throttled_file);
  o.decline_throttled = absl::GetFlag(FLAGS_decline_throttled);
  o.pressure_cooldown = absl::GetFlag(FLAGS_pressure_cooldown);
  auto window = client::ParseTrainWindow(absl::GetFlag(FLAGS_train_window));
  if (!window.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--train_window: ", window.status().message()));
  }
  o.train_window = *window;
  RETURN_IF_ERROR(client::ValidateEligibilityOptions(o));
  return o;
}

// Sends the board's condition with every task poll: its sample count, the
// watchdog's last pause (`gate` may be null) and its sensor files.
std::unique_ptr<client::Eligibility> WireEligibility(
    client::EligibilityOptions rules, const client::LocalTrainer& trainer,
    const client::WatchdogGate* gate, client::AgentOptions& options) {
  client::EligibilitySources sources;
  sources.samples = [&trainer] { return trainer.num_samples(); };
  if (gate != nullptr)
    sources.last_pause = [gate] { return gate->LastPaused(); };
  auto eligibility = std::make_unique<client::Eligibility>(
      std::move(rules), runtime::ProcFiles::Real(), Clock::Real(),
      std::move(sources));
  spdlog::info("{}", eligibility->Describe());
  options.condition = [e = eligibility.get()] { return e->Check(); };
  return eligibility;
}

// The checkpoint store (none without --checkpoint_dir) and when to save.
std::unique_ptr<checkpoint::CheckpointStore> StoreFromFlags() {
  if (absl::GetFlag(FLAGS_checkpoint_dir).empty()) return nullptr;
  checkpoint::StoreOptions store_options;
  store_options.keep = absl::GetFlag(FLAGS_checkpoint_keep);
  return std::make_unique<checkpoint::CheckpointStore>(
      absl::GetFlag(FLAGS_checkpoint_dir), checkpoint::FileSystem::Default(),
      store_options);
}

client::CheckpointPolicy CheckpointPolicyFromFlags() {
  client::CheckpointPolicy policy;
  policy.every_batches = absl::GetFlag(FLAGS_checkpoint_every_batches);
  policy.every = absl::GetFlag(FLAGS_checkpoint_every);
  return policy;
}

// Whom the watchdog tells of pauses and releases: set once the agent and
// the gate exist.
struct WatchdogLink {
  client::ClientAgent* agent = nullptr;
  client::WatchdogGate* gate = nullptr;
};

// The memory-pressure watchdog as the flags set it (see
// client/watchdog_gate.h); null with --nowatchdog.
absl::StatusOr<std::unique_ptr<client::WatchdogGate>> WatchdogFromFlags(
    bool can_resume, runtime::MemoryReader& memory, WatchdogLink* link) {
  if (!absl::GetFlag(FLAGS_watchdog)) return nullptr;
  ASSIGN_OR_RETURN(runtime::WatchdogOptions wopts, WatchdogOptionsFromFlags());
  const std::optional<pid_t> criu_supervisor = client::CriuSupervisorFromEnv();
  ASSIGN_OR_RETURN(
      client::ReleaseMode release,
      client::ChooseReleaseMode(absl::GetFlag(FLAGS_watchdog_release),
                                can_resume, criu_supervisor));
  wopts.release_enabled = release != client::ReleaseMode::kOff;
  spdlog::info(
      "watchdog: every {}; shrink below {} available or PSI some10 >= {}%, "
      "pause below {} or >= {}% (after {}), resume at >= {} and <= {}% "
      "(after {}), release after {} paused or below {} ({})",
      absl::FormatDuration(absl::GetFlag(FLAGS_watchdog_poll_interval)),
      wopts.soft_available.ToString(), wopts.soft_psi_some10,
      wopts.pause_available.ToString(), wopts.pause_psi_some10,
      absl::FormatDuration(wopts.pause_hold), wopts.resume_available.ToString(),
      wopts.resume_psi_some10, absl::FormatDuration(wopts.resume_hold),
      absl::FormatDuration(wopts.release_after),
      wopts.critical_available.ToString(), client::ReleaseModeName(release));
  client::WatchdogGateHooks hooks;
  hooks.on_pause = [link](bool paused, absl::Duration d) {
    if (link->agent == nullptr) return;
    link->agent->Heartbeat(
        paused ? v1::HeartbeatRequest::PAUSED : v1::HeartbeatRequest::TRAINING,
        d);
  };
  // The server holds this board's place in the round while it is away.
  hooks.on_release = [link] {
    if (link->agent == nullptr || link->gate == nullptr) return;
    link->agent->Heartbeat(v1::HeartbeatRequest::RELEASED,
                           link->gate->counters().paused);
  };
  if (release == client::ReleaseMode::kCriu) {
    hooks.dump = [pid = *criu_supervisor] {
      return client::RequestCriuDump(pid);
    };
  }
  auto gate = std::make_unique<client::WatchdogGate>(
      wopts, [&memory] { return memory.Read(); }, Clock::Real(), hooks);
  link->gate = gate.get();
  return gate;
}

// The process's exit status for how the agent ended.
int ExitCodeOf(const absl::Status& status, bool signalled,
               const client::ClientAgent& agent) {
  if (status.ok()) return 0;
  if (client::IsMemoryRelease(status)) {
    spdlog::warn(
        "exiting with status {} to free this process's memory; training "
        "state is checkpointed and a supervisor (--supervise, or systemd "
        "with RestartForceExitStatus={}) restarts it once memory is back",
        client::kMemoryReleaseExitCode, client::kMemoryReleaseExitCode);
    return client::kMemoryReleaseExitCode;
  }
  if (signalled) {  // stopped mid-wait or mid-call alike
    spdlog::info("stopped by signal after {} rounds", agent.rounds_trained());
    return 130;
  }
  if (client::IsIdentityRefusal(status)) {
    spdlog::error("{}", client::IdentityAdvice(status));
    spdlog::error(
        "stopping with exit status {}: retrying would be refused "
        "again",
        client::kRefusedExitCode);
    return client::kRefusedExitCode;
  }
  spdlog::error("client failed: {}", status.ToString());
  return 1;
}

// Waits for --server_ready_file (when given), then runs the agent.
absl::Status RunAgent(client::ClientAgent& agent, const ShutdownSignal& signal,
                      const std::string& name, const std::string& transport) {
  if (const std::string ready = absl::GetFlag(FLAGS_server_ready_file);
      !ready.empty()) {
    spdlog::info("waiting for the server to listen ({})", ready);
    RETURN_IF_ERROR(client::WaitForServerReadyFile(
        ready, absl::GetFlag(FLAGS_give_up_after),
        [&signal] { return signal.received(); }));
  }
  spdlog::info("client '{}' connecting to {} ({})", name,
               absl::GetFlag(FLAGS_server), transport);
  return agent.Run();
}

// Runs the agent over `trainer` (slowed as --compute_slowdown says) until
// the job ends, polling the watchdog `gate` (may be null); the process's
// exit status.
int RunWith(const client::AgentOptions& options, client::LocalTrainer& trainer,
            const security::ClientTransport& transport,
            client::WatchdogGate* gate, WatchdogLink& link) {
  const double slowdown = absl::GetFlag(FLAGS_compute_slowdown);
  client::SlowedTrainer slowed(trainer, slowdown);
  if (slowdown > 1) {
    spdlog::info("emulating a board {}x slower than this machine", slowdown);
  }
  client::ClientAgent agent(options, slowed,
                            v1::Federation::NewStub(transport.channel));
  link.agent = &agent;
  std::unique_ptr<runtime::PeriodicSampler> watchdog_poller;
  if (gate != nullptr) {
    watchdog_poller = std::make_unique<runtime::PeriodicSampler>(
        absl::GetFlag(FLAGS_watchdog_poll_interval), [gate] { gate->Poll(); });
  }
  ShutdownSignal signal([&](int sig) {
    spdlog::warn("signal {} received: stopping", sig);
    agent.Stop();
  });
  const absl::Status status =
      RunAgent(agent, signal, options.name, transport.description);
  watchdog_poller.reset();
  link.agent = nullptr;
  if (gate != nullptr) {
    const runtime::WatchdogCounters c = gate->counters();
    spdlog::info(
        "watchdog: {} pause(s), {} paused, {} shrink(s), {} release(s)",
        c.pauses,
        absl::FormatDuration(absl::Trunc(c.paused, absl::Milliseconds(1))),
        c.shrinks, c.releases);
  }
  return ExitCodeOf(status, signal.received(), agent);
}

int Run() {
  runtime::SetComputeThreads(std::max(1, absl::GetFlag(FLAGS_threads)));
  at::set_num_interop_threads(1);
  spdlog::info("compute: {}", runtime::DescribeComputeKernels());
  auto board = BoardConfigFromFlags();
  auto attack = client::ParseUpdateAttack(absl::GetFlag(FLAGS_attack));
  auto rules = EligibilityOptionsFromFlags();
  for (const absl::Status& s :
       {board.status(), attack.status(), rules.status()}) {
    if (!s.ok()) {
      spdlog::error("{}", std::string(s.message()));
      return 2;
    }
  }
  auto open_data = client::MakeBoardDataOpener(board->data);
  if (!open_data.ok()) {
    spdlog::error("cannot load training data: {}",
                  std::string(open_data.status().message()));
    return 2;
  }
  auto transport = security::MakeClientTransport(
      {absl::GetFlag(FLAGS_server),
       {absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
        absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_tls_server_name)},
       absl::GetFlag(FLAGS_insecure)},
      wire::ClientChannelArguments(), absl::Now());
  if (!transport.ok()) {
    spdlog::error("{}", std::string(transport.status().message()));
    // An expired or foreign certificate is who this board is; a missing
    // file or a contradiction is a mistake on the command line.
    return absl::IsFailedPrecondition(transport.status())
               ? client::kRefusedExitCode
               : 2;
  }
  client::AgentOptions options = AgentOptionsFromFlags(*board, *transport);
  if (options.allow_data_moves) {
    spdlog::warn(
        "data moves allowed: the server may move some of this board's "
        "training samples to other boards (trusted clusters only)");
  }
  runtime::ResourceMonitor monitor(runtime::ProcFiles::Real(), Clock::Real());
  runtime::PeriodicSampler sampler(
      absl::GetFlag(FLAGS_resource_sample_interval),
      [&monitor] { monitor.Sample(); });
  options.monitor = &monitor;
  std::unique_ptr<checkpoint::CheckpointStore> store = StoreFromFlags();
  const bool can_resume = store != nullptr;
  client::PlanTrainer trainer(*std::move(open_data),
                              static_cast<uint64_t>(board->partition.index),
                              std::move(store), CheckpointPolicyFromFlags());
  trainer.SetSkipBadRows(absl::GetFlag(FLAGS_skip_bad_rows));
  if (*attack) {
    spdlog::warn("--attack={}: this board sends poisoned updates (test only)",
                 (*attack)->spec);
    trainer.SetAttack(*std::move(attack));
  }
  runtime::MemoryReader memory_reader(runtime::ProcFiles::Real());
  WatchdogLink link;
  auto gate = WatchdogFromFlags(can_resume, memory_reader, &link);
  if (!gate.ok()) {
    spdlog::error("{}", std::string(gate.status().message()));
    return 2;
  }
  if (*gate) {
    trainer.SetGate(gate->get());
    // Pauses that held training at a batch boundary, and time paused.
    options.watchdog_totals = [g = gate->get()] {
      return std::make_pair(static_cast<uint32_t>(g->boundary_waits()),
                            absl::ToDoubleSeconds(g->counters().paused));
    };
  }
  const auto eligibility =
      WireEligibility(*std::move(rules), trainer, gate->get(), options);
  return RunWith(options, trainer, *transport, gate->get(), link);
}

}  // namespace

int main(int argc, char** argv) {
  fedberry::runtime::TuneHeapForTraining();  // before anything allocates much
  fedberry::runtime::SkipMutexDeadlockChecks();
  fedberry::ParseCommandLine(
      argc, argv,
      "fedberry device agent: fetches the job's training plan, trains on "
      "this board's data and sends model updates to the server.\nUsage: "
      "fedberry-client --server=gateway:50051 --tls_ca=fleet-ca.crt "
      "--tls_cert=board-3.crt --tls_key=board-3.key --data=csv:rows.csv\n      "
      " fedberry-client --server=gateway:50051 "
      "--partition_index=0 --partition_count=4",
      "client_main");
  // Before any thread starts (gRPC, the samplers, the watchdog's poller).
  BlockShutdownSignals();
  client::BlockCriuSignals();  // the CRIU release's protocol
  // Before LibTorch's first operation (FEDBERRY_KERNELS).
  if (auto kernels = runtime::UseComputeKernelsFromEnvironment();
      !kernels.ok()) {
    spdlog::error("{}", std::string(kernels.status().message()));
    return 2;
  }
  if (absl::GetFlag(FLAGS_supervise)) return Supervise(argc, argv);
  return Run();
}
