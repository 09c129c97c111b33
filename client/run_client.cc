#include "client/run_client.h"

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/command_line.h"
#include "base/file_system.h"
#include "base/lock_checks.h"
#include "base/shutdown_signal.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "client/board_data.h"
#include "client/client_agent.h"
#include "client/client_flags.h"
#include "client/clock_check.h"
#include "client/criu_adapter.h"
#include "client/criu_signals.h"
#include "client/eligibility.h"
#include "client/identity_refusal.h"
#include "client/memory_release.h"
#include "client/plan_trainer.h"
#include "client/release_mode.h"
#include "client/server_ready_file.h"
#include "client/supervisor.h"
#include "client/watchdog_gate.h"
#include "proto/wire.h"
#include "runtime/compute_kernels.h"
#include "runtime/device_facts.h"
#include "runtime/heap_tuning.h"
#include "runtime/memory_readings.h"
#include "runtime/periodic_sampler.h"
#include "runtime/proc_files.h"
#include "runtime/resource_monitor.h"
#include "runtime/torch_libraries.h"
#include "security/transport.h"

namespace fedberry::client {
namespace {

// The CRIU adapter of --watchdog_release=criu when CRIU can work here (and
// its images would not sit in memory); null otherwise, with the reason
// logged.
std::unique_ptr<CriuAdapter> UsableCriu(const ClientConfig& config) {
  if (!config.watchdog || config.watchdog_release != "criu" ||
      config.checkpoint_dir.empty()) {
    return nullptr;
  }
  auto criu = std::make_unique<CriuAdapter>(
      CriuOptions{"criu", config.criu_dir, /*shell_job=*/true});
  absl::Status usable = criu->Check();
  auto tmpfs = OnMemoryFileSystem(config.criu_dir);
  if (usable.ok() && tmpfs.ok() && *tmpfs) {
    usable = absl::FailedPreconditionError(
        absl::StrCat("images folder ", config.criu_dir,
                     " is on tmpfs, where a dump frees nothing"));
  }
  if (!usable.ok()) {
    spdlog::warn(
        "supervisor: CRIU cannot work here ({}); memory releases use "
        "checkpoint-and-exit instead",
        std::string(usable.message()));
    return nullptr;
  }
  spdlog::info(
      "supervisor: CRIU works here; memory releases are CRIU dumps to {}",
      config.criu_dir);
  return criu;
}

// --supervise: this process only restarts the client (itself, without
// --supervise) after memory releases.
int Supervise(int argc, char** argv, const ClientConfig& config) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  SupervisorOptions options;
  options.argv.push_back(n > 0 ? std::string(self, n) : std::string(argv[0]));
  for (int i = 1; i < argc; ++i) options.argv.push_back(argv[i]);
  options.argv.push_back("--supervise=false");  // the last one wins
  options.release_exit_code = kMemoryReleaseExitCode;
  options.levels = config.watchdog_options;
  options.max_restarts = config.supervise_max_restarts;
  options.poll = config.watchdog_poll_interval;
  options.report_every = config.watchdog_options.report_every;
  runtime::MemoryReader reader(runtime::ProcFiles::Real());
  options.read = [&reader] { return reader.Read(); };
  // A CRIU release is this process's job: it runs criu on the client.
  const std::unique_ptr<CriuAdapter> criu = UsableCriu(config);
  options.criu = criu.get();
  Supervisor supervisor(options);
  ShutdownSignal signal([&](int sig) {
    spdlog::warn("supervisor: signal {} received: stopping the client", sig);
    supervisor.Stop(sig);
  });
  std::optional<DumpRequestListener> dump_requests;
  if (options.criu != nullptr) {
    dump_requests.emplace([&](pid_t from) { supervisor.RequestDump(from); });
  }
  return supervisor.Run();
}

// The agent's settings from the config and the board's transport.
AgentOptions AgentOptionsOf(const ClientConfig& config,
                            const security::ClientTransport& transport) {
  AgentOptions options;
  options.device =
      ToDeviceInfo(runtime::ReadDeviceFacts(runtime::ProcFiles::Real()));
  options.name = config.name;
  if (options.name.empty()) {
    options.name = !transport.certificate_name.empty()
                       ? transport.certificate_name
                       : absl::StrCat(options.device.hostname(), "/",
                                      config.data.partition.index);
  }
  options.rpc_timeout = config.rpc_timeout;
  options.probe_transport = transport.probe;
  options.give_up_after = config.give_up_after;
  options.allow_data_moves = config.allow_data_moves;
  options.backoff.max = config.max_backoff;
  options.model_cache_dir = absl::StrCat(config.data.cache_dir, "/models");
  // Beside the training checkpoint when there is one: both must survive
  // the same restarts.
  options.secagg_state_dir =
      absl::StrCat(config.checkpoint_dir.empty() ? config.data.cache_dir
                                                 : config.checkpoint_dir,
                   "/secagg");
  // Mutual TLS: the fleet key signs the board's secure-aggregation keys.
  if (!config.transport.tls.cert.empty()) {
    options.secagg_key_file = config.transport.tls.key;
    options.secagg_ca_file = config.transport.tls.ca;
  }
  options.required_model_sha256 = config.model_sha256;
  options.seed = static_cast<uint64_t>(getpid());
  return options;
}

// Sends the board's condition with every task poll: its sample count, the
// watchdog's last pause (`gate` may be null) and its sensor files.
std::unique_ptr<Eligibility> WireEligibility(EligibilityOptions rules,
                                             const LocalTrainer& trainer,
                                             const WatchdogGate* gate,
                                             AgentOptions& options) {
  EligibilitySources sources;
  sources.samples = [&trainer] { return trainer.num_samples(); };
  if (gate != nullptr)
    sources.last_pause = [gate] { return gate->LastPaused(); };
  auto eligibility = std::make_unique<Eligibility>(
      std::move(rules), runtime::ProcFiles::Real(), Clock::Real(),
      std::move(sources));
  spdlog::info("{}", eligibility->Describe());
  options.condition = [e = eligibility.get()] { return e->Check(); };
  return eligibility;
}

// The checkpoint store (none without --checkpoint_dir).
std::unique_ptr<checkpoint::CheckpointStore> StoreOf(
    const ClientConfig& config) {
  if (config.checkpoint_dir.empty()) return nullptr;
  checkpoint::StoreOptions store_options;
  store_options.keep = config.checkpoint_keep;
  return std::make_unique<checkpoint::CheckpointStore>(
      config.checkpoint_dir, base::FileSystem::Default(), store_options);
}

// Whom the watchdog tells of pauses and releases: set once the agent and
// the gate exist.
struct WatchdogLink {
  ClientAgent* agent = nullptr;
  WatchdogGate* gate = nullptr;
};

// Heartbeats for the watchdog's pauses and releases, through `link`.
WatchdogGateHooks HeartbeatHooks(WatchdogLink* link) {
  WatchdogGateHooks hooks;
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
  return hooks;
}

// The memory-pressure watchdog as the config sets it (see
// client/watchdog_gate.h); null with --nowatchdog.
absl::StatusOr<std::unique_ptr<WatchdogGate>> WatchdogOf(
    const ClientConfig& config, bool can_resume, runtime::MemoryReader& memory,
    WatchdogLink* link) {
  if (!config.watchdog) return nullptr;
  runtime::WatchdogOptions wopts = config.watchdog_options;
  const std::optional<pid_t> criu_supervisor = CriuSupervisorFromEnv();
  FEDBERRY_ASSIGN_OR_RETURN(
      ReleaseMode release,
      ChooseReleaseMode(config.watchdog_release, can_resume, criu_supervisor));
  wopts.release_enabled = release != ReleaseMode::kOff;
  spdlog::info(
      "watchdog: every {}; shrink below {} available or PSI some10 >= {}%, "
      "pause below {} or >= {}% (after {}), resume at >= {} and <= {}% "
      "(after {}), release after {} paused or below {} ({})",
      absl::FormatDuration(config.watchdog_poll_interval),
      wopts.soft_available.ToString(), wopts.soft_psi_some10,
      wopts.pause_available.ToString(), wopts.pause_psi_some10,
      absl::FormatDuration(wopts.pause_hold), wopts.resume_available.ToString(),
      wopts.resume_psi_some10, absl::FormatDuration(wopts.resume_hold),
      absl::FormatDuration(wopts.release_after),
      wopts.critical_available.ToString(), ReleaseModeName(release));
  WatchdogGateHooks hooks = HeartbeatHooks(link);
  if (release == ReleaseMode::kCriu) {
    hooks.dump = [pid = *criu_supervisor] { return RequestCriuDump(pid); };
  }
  auto gate = std::make_unique<WatchdogGate>(
      wopts, [&memory] { return memory.Read(); }, Clock::Real(), hooks);
  link->gate = gate.get();
  return gate;
}

// The process's exit status for how the agent ended.
int ExitCodeOf(const absl::Status& status, bool signalled,
               const ClientAgent& agent) {
  if (status.ok()) return 0;
  if (IsMemoryRelease(status)) {
    spdlog::warn(
        "exiting with status {} to free this process's memory; training "
        "state is checkpointed and a supervisor (--supervise, or systemd "
        "with RestartForceExitStatus={}) restarts it once memory is back",
        kMemoryReleaseExitCode, kMemoryReleaseExitCode);
    return kMemoryReleaseExitCode;
  }
  if (signalled) {  // stopped mid-wait or mid-call alike
    spdlog::info("stopped by signal after {} rounds", agent.rounds_trained());
    return 130;
  }
  if (IsIdentityRefusal(status)) {
    spdlog::error("{}", IdentityAdvice(status));
    spdlog::error(
        "stopping with exit status {}: retrying would be refused "
        "again",
        kRefusedExitCode);
    return kRefusedExitCode;
  }
  spdlog::error("client failed: {}", status.ToString());
  return 1;
}

// Waits for --server_ready_file (when given), then runs the agent.
absl::Status RunAgent(ClientAgent& agent, const ShutdownSignal& signal,
                      const ClientConfig& config, const std::string& name,
                      const std::string& transport) {
  if (!config.server_ready_file.empty()) {
    spdlog::info("waiting for the server to listen ({})",
                 config.server_ready_file);
    FEDBERRY_RETURN_IF_ERROR(
        WaitForServerReadyFile(config.server_ready_file, config.give_up_after,
                               [&signal] { return signal.received(); }));
  }
  spdlog::info("client '{}' connecting to {} ({})", name,
               config.transport.server, transport);
  return agent.Run();
}

// Runs the agent over `trainer` until the job ends, polling the watchdog
// `gate` (may be null); the process's exit status.
int RunWith(const ClientConfig& config, const AgentOptions& options,
            LocalTrainer& trainer, const security::ClientTransport& transport,
            WatchdogGate* gate, WatchdogLink& link) {
  ClientAgent agent(options, trainer,
                    v1::Federation::NewStub(transport.channel));
  link.agent = &agent;
  std::unique_ptr<runtime::PeriodicSampler> watchdog_poller;
  if (gate != nullptr) {
    watchdog_poller = std::make_unique<runtime::PeriodicSampler>(
        config.watchdog_poll_interval, [gate] { gate->Poll(); });
  }
  ShutdownSignal signal([&](int sig) {
    spdlog::warn("signal {} received: stopping", sig);
    agent.Stop();
  });
  const absl::Status status =
      RunAgent(agent, signal, config, options.name, transport.description);
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

// The board's trainer wrapped in `decorators`, innermost first; `chain`
// owns the wrappers. The outermost.
LocalTrainer& Decorate(LocalTrainer& trainer,
                       const std::vector<TrainerDecorator>& decorators,
                       std::vector<std::unique_ptr<LocalTrainer>>& chain) {
  LocalTrainer* outer = &trainer;
  for (const TrainerDecorator& decorate : decorators) {
    chain.push_back(decorate(*outer));
    outer = chain.back().get();
  }
  return *outer;
}

// A board whose clock NTP has not set yet (a Pi has no real-time clock)
// waits for it before anything reads the time or checks a certificate;
// see client/clock_check.h. The exit status when it gives up (1) or is
// stopped (130); nothing when the clock is right.
std::optional<int> AwaitPlausibleClock(const ClientConfig& config) {
  const security::ClientTlsFiles& tls = config.transport.tls;
  const ClockFloor floor = EarliestPlausibleTime(
      FedberryBuildTime(), {tls.cert, tls.ca}, base::FileSystem::Default());
  if (CheckClock(Clock::Real().Now(), floor).ok()) return std::nullopt;
  ShutdownSignal signal(
      [](int sig) { spdlog::warn("signal {} received: stopping", sig); });
  ClockWaitOptions options;
  options.max_wait = config.clock_wait;
  options.stopped = [&signal] { return signal.received(); };
  options.log = [](const std::string& words) { spdlog::warn("{}", words); };
  const absl::Status waited =
      WaitForPlausibleClock(Clock::Real(), floor, options);
  if (waited.ok()) return std::nullopt;
  if (absl::IsCancelled(waited)) return 130;
  spdlog::error("{}", std::string(waited.message()));
  return 1;
}

// The channel to the server; logs why not and sets `exit_code` on failure.
std::optional<security::ClientTransport> TransportOf(const ClientConfig& config,
                                                     int& exit_code) {
  auto transport = security::MakeClientTransport(
      config.transport, wire::ClientChannelArguments(), Clock::Real().Now());
  if (transport.ok()) return *std::move(transport);
  spdlog::error("{}", std::string(transport.status().message()));
  // An expired or foreign certificate is who this board is; a missing file
  // or a contradiction is a mistake on the command line.
  exit_code =
      absl::IsFailedPrecondition(transport.status()) ? kRefusedExitCode : 2;
  return std::nullopt;
}

// Trains as `config` says once the data opened; the exit status.
int RunBoard(const ClientConfig& config, const ClientDecorators& decorators,
             DataOpener open_data) {
  if (std::optional<int> code = AwaitPlausibleClock(config)) return *code;
  int exit_code = 2;
  std::optional<security::ClientTransport> transport =
      TransportOf(config, exit_code);
  if (!transport) return exit_code;
  AgentOptions options = AgentOptionsOf(config, *transport);
  options.secagg_before_stage = decorators.secagg_before_stage;
  options.secagg_wrap_signer = decorators.secagg_wrap_signer;
  options.secagg_on_words = decorators.secagg_on_words;
  if (options.allow_data_moves) {
    spdlog::warn(
        "data moves allowed: the server may move some of this board's "
        "training samples to other boards (trusted clusters only)");
  }
  runtime::ResourceMonitor monitor(runtime::ProcFiles::Real(), Clock::Real());
  runtime::PeriodicSampler sampler(config.resource_sample_interval,
                                   [&monitor] { monitor.Sample(); });
  options.monitor = &monitor;
  std::unique_ptr<checkpoint::CheckpointStore> store = StoreOf(config);
  const bool can_resume = store != nullptr;
  PlanTrainer trainer(std::move(open_data),
                      static_cast<uint64_t>(config.data.partition.index),
                      std::move(store), config.checkpoint);
  trainer.SetSkipBadRows(config.skip_bad_rows);
  std::vector<std::unique_ptr<LocalTrainer>> chain;
  LocalTrainer& outer = Decorate(trainer, decorators.trainers, chain);
  runtime::MemoryReader memory_reader(runtime::ProcFiles::Real(),
                                      decorators.memory_readings);
  WatchdogLink link;
  auto gate = WatchdogOf(config, can_resume, memory_reader, &link);
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
      WireEligibility(config.eligibility, outer, gate->get(), options);
  return RunWith(config, options, outer, *transport, gate->get(), link);
}

}  // namespace

int RunClient(int argc, char** argv, const ClientConfig& config,
              const ClientDecorators& decorators) {
  if (config.supervise) return Supervise(argc, argv, config);
  runtime::SetComputeThreads(std::max(1, config.threads));
  at::set_num_interop_threads(1);
  spdlog::info("compute: {}", runtime::DescribeComputeKernels());
  if (std::string unrepaired =
          runtime::CheckTorchLibraries(runtime::ProcFiles::Real());
      !unrepaired.empty()) {
    spdlog::warn("{}", unrepaired);
  }
  BoardDataOptions data = config.data;
  data.edit_idx_shard = decorators.edit_idx_shard;
  auto open_data = MakeBoardDataOpener(data);
  if (!open_data.ok()) {
    spdlog::error("cannot load training data: {}",
                  std::string(open_data.status().message()));
    return 2;
  }
  return RunBoard(config, decorators, *std::move(open_data));
}

int ClientMain(int argc, char** argv, absl::string_view usage,
               absl::string_view flags_file,
               const DecoratorsFromFlags& decorators) {
  runtime::TuneHeapForTraining();  // before anything allocates much
  base::SkipMutexDeadlockChecks();
  ParseCommandLine(argc, argv, usage, flags_file);
  // Before any thread starts (gRPC, the samplers, the watchdog's poller).
  BlockShutdownSignals();
  BlockCriuSignals();  // the CRIU release's protocol
  // Before LibTorch's first operation (FEDBERRY_KERNELS).
  if (auto kernels = runtime::UseComputeKernelsFromEnvironment();
      !kernels.ok()) {
    spdlog::error("{}", std::string(kernels.status().message()));
    return 2;
  }
  absl::StatusOr<ClientConfig> config = ClientConfigFromFlags();
  absl::StatusOr<ClientDecorators> added =
      config.ok() && decorators ? decorators(*config) : ClientDecorators{};
  for (const absl::Status& s : {config.status(), added.status()}) {
    if (!s.ok()) {
      spdlog::error("{}", std::string(s.message()));
      return 2;
    }
  }
  return RunClient(argc, argv, *config, *added);
}

}  // namespace fedberry::client
