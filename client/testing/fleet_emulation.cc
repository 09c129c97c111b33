#include "client/testing/fleet_emulation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fedberry::client {

absl::StatusOr<TrainOutcome> SlowedTrainer::Train(
    const TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  const absl::Time start = absl::Now();
  absl::StatusOr<TrainOutcome> out = inner().Train(task, config, global, stop);
  if (!out.ok() || slowdown_ <= 1) return out;
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const absl::Time until =
      absl::Now() + absl::Seconds((slowdown_ - 1) * seconds);
  while (!stop.load() && absl::Now() < until) {
    absl::SleepFor(std::min(absl::Milliseconds(50), until - absl::Now()));
  }
  if (stop.load()) return absl::CancelledError("stopped during training");
  out->metrics.set_train_seconds(out->metrics.train_seconds() * slowdown_);
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
