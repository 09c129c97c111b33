// fedberry-client: the device agent that trains on this board's data.
#include <spdlog/spdlog.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/client_agent.h"
#include "client/image_trainer.h"
#include "proto/wire.h"
#include "runtime/image_dataset.h"
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
ABSL_FLAG(absl::Duration, give_up_after, absl::ZeroDuration(),
          "Exit when the server stays unreachable this long (0: never).");

using namespace fedberry;

namespace {

v1::DeviceInfo DescribeDevice() {
  v1::DeviceInfo info;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  info.set_hostname(host);
  utsname u;
  if (uname(&u) == 0) info.set_architecture(u.machine);
  info.set_cores(std::thread::hardware_concurrency());
  info.set_total_memory_bytes(static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                              sysconf(_SC_PAGESIZE));
  return info;
}

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
  spdlog::info("loaded shard {}/{} ({}): {} images from {}", partition.index,
               partition.count, absl::GetFlag(FLAGS_partition), data->rows,
               absl::GetFlag(FLAGS_data));

  client::AgentOptions options;
  options.device = DescribeDevice();
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
  client::ClientAgent agent(options, trainer,
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
