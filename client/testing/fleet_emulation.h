// Emulating a heterogeneous fleet on one machine (fedberry-sim's
// --fleet_profile, through fedberry-emulated-client's --compute_slowdown and
// --data_fraction): a board that computes k times slower than this machine,
// and a board that holds only part of its shard. Linked by the simulator's
// client and the tests only, never by fedberry-client.
//
// SlowedTrainer wraps the real trainer: after a local training run that took
// t seconds it sleeps (k - 1) * t more (waking early when the client is
// stopped) and reports k * t as the training time, so the samples/s the
// client sends are those of a k times slower board. The extra time is spent
// after training rather than between batches; a round's length and the
// measured throughput are what a slow board's would be.
// Thread-safety: as the wrapped trainer.
#ifndef FEDBERRY_CLIENT_TESTING_FLEET_EMULATION_H_
#define FEDBERRY_CLIENT_TESTING_FLEET_EMULATION_H_

#include "client/local_trainer.h"
#include "runtime/image_dataset.h"

namespace fedberry::client {

// Evaluation is not slowed: the fleet profile models training speed.
class SlowedTrainer : public LocalTrainerWrapper {
 public:
  // `inner` must outlive this object; `slowdown` >= 1.
  SlowedTrainer(LocalTrainer& inner, double slowdown)
      : LocalTrainerWrapper(inner), slowdown_(slowdown) {}

  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;

 private:
  double slowdown_;
};

// Keeps the first ceil(fraction * rows) rows of `data` (the shard stays a
// deterministic function of the partition). InvalidArgument unless
// 0 < fraction <= 1.
absl::Status KeepFraction(runtime::ImageDataset& data, double fraction);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_TESTING_FLEET_EMULATION_H_
