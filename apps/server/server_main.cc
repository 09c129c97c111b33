// fedberry-server: the aggregation server of a federated training job, or
// a site gateway of a parent server (--upstream). Its flags are its
// table's (server_flag_table.h); the programs are run_server.h's.
#include <spdlog/spdlog.h>

#include <string>

#include "apps/server/run_server.h"
#include "apps/server/server_config.h"
#include "apps/server/server_flag_table.h"
#include "apps/server/server_flags.h"
#include "base/command_line.h"
#include "base/lock_checks.h"
#include "base/shutdown_signal.h"
#include "runtime/compute_kernels.h"
#include "runtime/heap_tuning.h"
#include "runtime/proc_files.h"
#include "runtime/torch_libraries.h"
#include "server/fleet/version_gate.h"

namespace fedberry::apps {
namespace {

int Run(const ServerConfig& config) {
  // Before LibTorch's first operation (FEDBERRY_KERNELS).
  if (auto kernels = runtime::UseComputeKernelsFromEnvironment();
      !kernels.ok()) {
    spdlog::error("{}", std::string(kernels.status().message()));
    return 2;
  }
  if (auto gate = server::VersionGate::Parse(config.fleet.min_client_version);
      !gate.ok()) {
    spdlog::error("{}", std::string(gate.status().message()));
    return 2;
  }
  runtime::SetComputeThreads(config.threads);
  spdlog::info("compute: {}", runtime::DescribeComputeKernels());
  if (std::string unrepaired =
          runtime::CheckTorchLibraries(runtime::ProcFiles::Real());
      !unrepaired.empty()) {
    spdlog::warn("{}", unrepaired);
  }
  return config.is_gateway() ? RunGateway(config) : RunJob(config);
}

}  // namespace
}  // namespace fedberry::apps

int main(int argc, char** argv) {
  fedberry::runtime::TuneHeapForServing();  // before anything allocates much
  fedberry::base::SkipMutexDeadlockChecks();
  fedberry::ParseCommandLine(argc, argv, fedberry::apps::kServerUsage,
                             fedberry::apps::kServerFlagsFile);
  const absl::StatusOr<fedberry::apps::ServerConfig> config =
      fedberry::apps::ServerConfigFromFlags();
  if (!config.ok()) {
    spdlog::error("{}", std::string(config.status().message()));
    return 2;
  }
  // Before gRPC's and the driver's threads start, so a signal reaches the
  // ShutdownSignal made after them instead of killing the process.
  fedberry::BlockShutdownSignals();
  return fedberry::apps::Run(*config);
}
