#include "client/testing/fleet_emulation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace fedberry::client {
namespace {

// Waits `d` in steps of at most 50 ms, so that a stop ends the wait soon;
// false when it did.
bool WaitUnlessStopped(absl::Duration d, const std::atomic<bool>& stop,
                       const EmulatedTime& time) {
  const absl::Time until = time.clock->Now() + d;
  while (!stop.load()) {
    const absl::Duration left = until - time.clock->Now();
    if (left <= absl::ZeroDuration()) return true;
    const absl::Duration step = std::min(absl::Milliseconds(50), left);
    if (time.sleep) {
      time.sleep(step);
    } else {
      time.clock->SleepFor(step);
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<TrainOutcome> SlowedTrainer::Train(
    const TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  const absl::Time start = time_.clock->Now();
  absl::StatusOr<TrainOutcome> out = inner().Train(task, config, global, stop);
  if (!out.ok() || slowdown_ <= 1) return out;
  const absl::Duration took = time_.clock->Now() - start;
  if (!WaitUnlessStopped((slowdown_ - 1) * took, stop, time_)) {
    return absl::CancelledError("stopped during training");
  }
  out->metrics.set_train_seconds(out->metrics.train_seconds() * slowdown_);
  return out;
}

absl::StatusOr<TrainOutcome> PausingTrainer::Train(
    const TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  absl::StatusOr<TrainOutcome> out = inner().Train(task, config, global, stop);
  if (!out.ok() || pause_.every <= 0) return out;
  if (++trained_ % pause_.every != 0) return out;
  if (!WaitUnlessStopped(pause_.pause, stop, time_)) {
    return absl::CancelledError(absl::StrCat(
        "stopped during an emulated pause of task ", task.task_id));
  }
  return out;
}

absl::Status KeepFraction(runtime::ImageDataset& data, double fraction) {
  if (!(fraction > 0) || fraction > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("data fraction ", fraction, " is outside (0, 1]"));
  }
  const int64_t keep = std::min<int64_t>(
      data.rows, static_cast<int64_t>(
                     std::ceil(fraction * static_cast<double>(data.rows))));
  const int64_t pixels = data.height * data.width;
  data.pixels.resize(static_cast<size_t>(keep * pixels));
  data.labels.resize(static_cast<size_t>(keep));
  data.rows = keep;
  return absl::OkStatus();
}

}  // namespace fedberry::client
