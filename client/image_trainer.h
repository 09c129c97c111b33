// The LocalTrainer for image classifiers: trains a runtime::Net on this
// board's partition of an image data set. With a checkpoint store it saves
// its training state every N batches or S seconds and when local training
// ends, and a restarted client resumes the same task from the newest valid
// checkpoint; state for a task the server has closed is dropped.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_CLIENT_IMAGE_TRAINER_H_
#define FEDBERRY_CLIENT_IMAGE_TRAINER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "checkpoint/checkpoint_store.h"
#include "client/local_trainer.h"
#include "client/training_checkpoint.h"
#include "client/training_gate.h"
#include "runtime/image_dataset.h"

namespace fedberry::client {

struct CheckpointPolicy {
  int64_t every_batches = 100;               // 0: never by count
  absl::Duration every = absl::Seconds(60);  // zero: never by time
};

class ImageTrainer : public LocalTrainer {
 public:
  // `seed_salt` makes this board's data order differ from other boards'.
  // `store` (may be null: no checkpoints) is read once here for a state to
  // resume.
  ImageTrainer(runtime::ImageDataset data, uint64_t seed_salt,
               std::unique_ptr<checkpoint::CheckpointStore> store = nullptr,
               CheckpointPolicy policy = {});

  uint64_t num_samples() const override { return data_.rows; }
  uint64_t sample_bytes() const override;
  absl::StatusOr<runtime::ImageDataset> SamplesToLend(
      const TaskRef& task, const v1::TrainConfig& config,
      uint64_t count) override;
  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;
  void JobDone() override;
  // Asked at every batch boundary (may be null: never paused); must outlive
  // the trainer. A memory release it asks for is checkpointed (when there
  // is a store) before Train returns its status.
  void SetGate(TrainingGate* gate) { gate_ = gate; }

  int checkpoints_written() const { return checkpoints_written_; }
  int checkpoints_failed() const { return checkpoints_failed_; }

 private:
  void Save(const TrainingSnapshot& snapshot, runtime::Net& net,
            torch::optim::Optimizer* optimizer);
  // The rows this board lends first to last in a round of `config`.
  absl::StatusOr<std::vector<int64_t>> LentRowsFor(
      const v1::TrainConfig& config, uint64_t count) const;

  runtime::ImageDataset data_;
  uint64_t seed_salt_;
  std::unique_ptr<checkpoint::CheckpointStore> store_;
  CheckpointPolicy policy_;
  std::optional<checkpoint::LoadedCheckpoint> resumable_;
  std::map<std::string, std::shared_ptr<runtime::Net>> nets_;  // by name
  int checkpoints_written_ = 0;
  int checkpoints_failed_ = 0;
  TrainingGate* gate_ = nullptr;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_IMAGE_TRAINER_H_
