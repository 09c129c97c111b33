// Emulating a heterogeneous fleet on one machine (fedberry-sim's
// --fleet_profile, through fedberry-emulated-client's --compute_slowdown,
// --data_fraction, --pause_every and --pause_seconds): a board that
// computes k times slower than this machine, a board that holds only part
// of its shard, and a board that stops now and then. Linked by the
// simulator's client and the tests only, never by fedberry-client.
//
// SlowedTrainer wraps the real trainer: after a local training run that took
// t seconds it sleeps (k - 1) * t more (waking early when the client is
// stopped) and reports k * t as the training time, so the samples/s the
// client sends are those of a k times slower board. The extra time is spent
// after training rather than between batches; a round's length and the
// measured throughput are what a slow board's would be.
//
// PausingTrainer wraps it in turn: on every N-th task it trains, the board
// stands still for S seconds before it hands its update back, as a board
// whose watchdog held it under memory pressure pushes late. It sends no
// heartbeat meanwhile (a board stopped for longer than the server's
// liveness period, 2 min, loses its task), and the pause is not training
// time: the reported throughput stays the board's.
// Thread-safety: as the wrapped trainer.
#ifndef FEDBERRY_CLIENT_TESTING_FLEET_EMULATION_H_
#define FEDBERRY_CLIENT_TESTING_FLEET_EMULATION_H_

#include <functional>

#include "absl/time/time.h"
#include "base/clock.h"
#include "client/local_trainer.h"
#include "runtime/image_dataset.h"

namespace fedberry::client {

// How the emulation tells and spends time: the real clock by default; a
// test passes a SimulatedClock, whose SleepFor advances it, and may hook
// each sleep (`sleep`, used instead of clock->SleepFor when set).
struct EmulatedTime {
  Clock* clock = &Clock::Real();
  std::function<void(absl::Duration)> sleep;
};

// Evaluation is not slowed: the fleet profile models training speed.
class SlowedTrainer : public LocalTrainerWrapper {
 public:
  // `inner` must outlive this object; `slowdown` >= 1.
  SlowedTrainer(LocalTrainer& inner, double slowdown, EmulatedTime time = {})
      : LocalTrainerWrapper(inner), slowdown_(slowdown), time_(time) {}

  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;

 private:
  double slowdown_;
  EmulatedTime time_;
};

struct PauseEmulation {
  int every = 0;  // pause on every `every`-th task trained; 0: never
  absl::Duration pause = absl::ZeroDuration();
};

// Evaluation is not paused. Cancelled when `stop` ends a pause.
class PausingTrainer : public LocalTrainerWrapper {
 public:
  // `inner` must outlive this object.
  PausingTrainer(LocalTrainer& inner, PauseEmulation pause,
                 EmulatedTime time = {})
      : LocalTrainerWrapper(inner), pause_(pause), time_(time) {}

  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;

 private:
  const PauseEmulation pause_;
  EmulatedTime time_;
  int trained_ = 0;  // tasks trained so far (a failed run is not one)
};

// Keeps the first ceil(fraction * rows) rows of `data` (the shard stays a
// deterministic function of the partition). InvalidArgument unless
// 0 < fraction <= 1.
absl::Status KeepFraction(runtime::ImageDataset& data, double fraction);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_TESTING_FLEET_EMULATION_H_
