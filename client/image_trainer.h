// The LocalTrainer for image classifiers: trains a runtime::Net on this
// board's partition of an image data set.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_CLIENT_IMAGE_TRAINER_H_
#define FEDBERRY_CLIENT_IMAGE_TRAINER_H_

#include <map>
#include <memory>
#include <string>

#include "client/local_trainer.h"
#include "runtime/image_dataset.h"

namespace fedberry::client {

class ImageTrainer : public LocalTrainer {
 public:
  // `seed_salt` makes this board's data order differ from other boards'.
  ImageTrainer(runtime::ImageDataset data, uint64_t seed_salt);

  uint64_t num_samples() const override { return data_.rows; }
  absl::StatusOr<TrainOutcome> Train(const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;

 private:
  runtime::ImageDataset data_;
  uint64_t seed_salt_;
  std::map<std::string, std::shared_ptr<runtime::Net>> nets_;  // by name
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_IMAGE_TRAINER_H_
