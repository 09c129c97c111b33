#include "client/image_trainer.h"

#include <spdlog/spdlog.h>

#include "runtime/status_macros.h"
#include "runtime/trainer.h"

namespace fedberry::client {

ImageTrainer::ImageTrainer(runtime::ImageDataset data, uint64_t seed_salt)
    : data_(std::move(data)), seed_salt_(seed_salt) {}

absl::StatusOr<TrainOutcome> ImageTrainer::Train(
    const v1::TrainConfig& config, const runtime::NamedTensors& global,
    const std::atomic<bool>& stop) {
  auto& net = nets_[config.model()];
  if (!net) {
    ASSIGN_OR_RETURN(net, runtime::MakeNet(config.model()));
  }
  RETURN_IF_ERROR(runtime::LoadState(*net, global));
  runtime::TrainOptions options;
  options.local_epochs = static_cast<int>(config.local_epochs());
  options.local_steps = static_cast<int64_t>(config.local_steps());
  options.batch_size = static_cast<int64_t>(config.batch_size());
  options.learning_rate = config.learning_rate();
  options.momentum = config.momentum();
  options.seed = config.seed() * 1315423911u + seed_salt_;
  int64_t last_logged = 0;
  ASSIGN_OR_RETURN(
      runtime::TrainResult result,
      runtime::Train(*net, data_, options, &stop,
                     [&](int64_t done, int64_t planned) {
                       // A line at every quarter, so a long round shows life.
                       if (done * 4 / planned != last_logged * 4 / planned ||
                           done == planned) {
                         spdlog::info("training: {}/{} batches", done, planned);
                       }
                       last_logged = done;
                     }));
  TrainOutcome out;
  out.model = runtime::StateOf(*net);
  out.num_samples = static_cast<uint64_t>(result.samples);
  out.metrics.set_train_loss(result.mean_loss);
  out.metrics.set_train_accuracy(result.accuracy);
  out.metrics.set_train_seconds(result.seconds);
  out.metrics.set_steps(static_cast<uint64_t>(result.steps));
  return out;
}

}  // namespace fedberry::client
