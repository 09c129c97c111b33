// fedberry-client: the device agent that trains on this board's data.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/client_agent.h"
#include "client/fleet_emulation.h"
#include "client/image_trainer.h"
#include "client/round_meter.h"
#include "proto/wire.h"
#include "runtime/device_facts.h"
#include "runtime/image_dataset.h"
#include "runtime/periodic_sampler.h"
#include "runtime/resource_monitor.h"
#include "runtime/shutdown_signal.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "Server address host:port.");
ABSL_FLAG(std::string, data, fedberry::runtime::kDefaultFashionMnistDir,
          "Folder with the training split (train-*-idx*-ubyte[.gz]).");
ABSL_FLAG(int, partition_index, 0, "This board's shard, 0-based.");
ABSL_FLAG(int, partition_count, 1, "Number of shards the data is split into.");
ABSL_FLAG(std::string, partition, "iid", "Split: iid or dirichlet.");
ABSL_FLAG(double, alpha, 0.5, "Dirichlet concentration (non-IID skew).");
ABSL_FLAG(uint64_t, partition_seed, 42,
          "Seed of the split; every board of a job must use the same.");
ABSL_FLAG(int, threads, 1, "LibTorch intra-op threads.");
ABSL_FLAG(std::string, name, "",
          "Stable client name (default: hostname/partition index).");
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
ABSL_FLAG(absl::Duration, give_up_after, absl::ZeroDuration(),
          "Exit when the server stays unreachable this long (0: never).");

using namespace fedberry;

namespace {

int Run() {
  const int threads = std::max(1, absl::GetFlag(FLAGS_threads));
  torch::set_num_threads(threads);
  at::set_num_interop_threads(1);

  auto kind = runtime::ParsePartitionKind(absl::GetFlag(FLAGS_partition));
  if (!kind.ok()) {
    spdlog::error("{}", std::string(kind.status().message()));
    return 2;
  }
  runtime::PartitionSpec partition;
  partition.kind = *kind;
  partition.index = absl::GetFlag(FLAGS_partition_index);
  partition.count = absl::GetFlag(FLAGS_partition_count);
  partition.alpha = absl::GetFlag(FLAGS_alpha);
  partition.seed = absl::GetFlag(FLAGS_partition_seed);
  auto data = runtime::LoadIdxDataset(absl::GetFlag(FLAGS_data),
                                      runtime::Split::kTrain, &partition);
  if (!data.ok()) {
    spdlog::error("cannot load training data: {}",
                  std::string(data.status().message()));
    return 2;
  }
  if (absl::GetFlag(FLAGS_data_fraction) != 1.0) {
    if (absl::Status s =
            client::KeepFraction(*data, absl::GetFlag(FLAGS_data_fraction));
        !s.ok()) {
      spdlog::error("{}", std::string(s.message()));
      return 2;
    }
  }
  if (!(absl::GetFlag(FLAGS_compute_slowdown) >= 1)) {
    spdlog::error("--compute_slowdown must be >= 1");
    return 2;
  }
  spdlog::info("loaded shard {}/{} ({}): {} images from {}", partition.index,
               partition.count, absl::GetFlag(FLAGS_partition), data->rows,
               absl::GetFlag(FLAGS_data));

  client::AgentOptions options;
  options.device = client::ToDeviceInfo(
      runtime::ReadDeviceFacts(runtime::ProcFiles::Real()));
  runtime::ResourceMonitor monitor(runtime::ProcFiles::Real(), Clock::Real());
  runtime::PeriodicSampler sampler(
      absl::GetFlag(FLAGS_resource_sample_interval),
      [&monitor] { monitor.Sample(); });
  options.monitor = &monitor;
  options.name =
      absl::GetFlag(FLAGS_name).empty()
          ? absl::StrCat(options.device.hostname(), "/", partition.index)
          : absl::GetFlag(FLAGS_name);
  options.rpc_timeout = absl::GetFlag(FLAGS_rpc_timeout);
  options.give_up_after = absl::GetFlag(FLAGS_give_up_after);
  options.backoff.max = absl::GetFlag(FLAGS_max_backoff);
  options.seed = static_cast<uint64_t>(getpid());
  std::unique_ptr<checkpoint::CheckpointStore> store;
  if (!absl::GetFlag(FLAGS_checkpoint_dir).empty()) {
    checkpoint::StoreOptions store_options;
    store_options.keep = absl::GetFlag(FLAGS_checkpoint_keep);
    store = std::make_unique<checkpoint::CheckpointStore>(
        absl::GetFlag(FLAGS_checkpoint_dir), checkpoint::FileSystem::Default(),
        store_options);
  }
  client::CheckpointPolicy policy;
  policy.every_batches = absl::GetFlag(FLAGS_checkpoint_every_batches);
  policy.every = absl::GetFlag(FLAGS_checkpoint_every);
  client::ImageTrainer trainer(*std::move(data),
                               static_cast<uint64_t>(partition.index),
                               std::move(store), policy);
  client::SlowedTrainer slowed(trainer, absl::GetFlag(FLAGS_compute_slowdown));
  if (absl::GetFlag(FLAGS_compute_slowdown) > 1) {
    spdlog::info("emulating a board {}x slower than this machine",
                 absl::GetFlag(FLAGS_compute_slowdown));
  }
  client::ClientAgent agent(options, slowed,
                            v1::Federation::NewStub(wire::MakeClientChannel(
                                absl::GetFlag(FLAGS_server))));
  ShutdownSignal signal([&](int sig) {
    spdlog::warn("signal {} received: stopping", sig);
    agent.Stop();
  });
  spdlog::info("client '{}' connecting to {}", options.name,
               absl::GetFlag(FLAGS_server));
  absl::Status status = agent.Run();
  if (status.ok()) return 0;
  if (absl::IsCancelled(status) && signal.received()) {
    spdlog::info("stopped by signal after {} rounds", agent.rounds_trained());
    return 130;
  }
  spdlog::error("client failed: {}", status.ToString());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "fedberry device agent: trains on this board's data shard and sends "
      "model updates to the server.\nUsage: fedberry-client "
      "--server=gateway:50051 --partition_index=0 --partition_count=4");
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "client_main");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
  absl::ParseCommandLine(argc, argv);
  return Run();
}
