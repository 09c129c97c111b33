#include "client/checkpoint_keeper.h"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

namespace fedberry::client {

CheckpointKeeper::CheckpointKeeper(
    std::unique_ptr<checkpoint::CheckpointStore> store, CheckpointPolicy policy,
    Clock& clock)
    : store_(std::move(store)), policy_(policy), clock_(clock) {
  if (!store_) return;
  auto loaded = store_->LoadLatest();
  if (!loaded.ok()) {
    spdlog::info("nothing to resume: {}", loaded.status().ToString());
    return;
  }
  for (const auto& s : loaded->skipped) {
    spdlog::warn("skipped checkpoint: {}", std::string(s.message()));
  }
  auto snapshot = DecodeTrainingSnapshot(*loaded);
  if (!snapshot.ok()) {
    spdlog::warn("ignoring checkpoint {}: {}", loaded->name,
                 std::string(snapshot.status().message()));
    return;
  }
  spdlog::info(
      "found checkpoint {} (verified): round {} task {}, batch {}/{}{}",
      loaded->name, snapshot->round, snapshot->task_id, snapshot->cursor.step,
      snapshot->cursor.planned,
      snapshot->finished ? ", local training finished" : "");
  // A finished round's leftovers feed the next round; an unfinished one
  // still carries what it started with.
  found_residual_ =
      snapshot->finished ? snapshot->residual_next : snapshot->residual;
  found_ = *std::move(loaded);
}

void CheckpointKeeper::DropFound() {
  if (found_) {
    spdlog::info("dropping checkpoint {}: the job is over", found_->name);
    found_.reset();
  }
}

std::optional<TrainingSnapshot> CheckpointKeeper::TakeResumable(
    const TrainingSnapshot& snapshot,
    std::optional<checkpoint::LoadedCheckpoint>& resume) {
  resume = std::move(found_);
  found_.reset();
  if (!resume) return std::nullopt;
  auto s = DecodeTrainingSnapshot(*resume);
  if (!s.ok()) return std::nullopt;
  const bool same_task =
      s->round == snapshot.round && s->task_id == snapshot.task_id &&
      s->model == snapshot.model && s->data_seed == snapshot.data_seed;
  if (same_task && s->plan != snapshot.plan) {
    // Same task, another plan (a server restarted with other settings,
    // or a checkpoint from before plans were fingerprinted): the
    // optimizer's state and the data's binding may not fit it.
    spdlog::info(
        "dropping checkpoint {} of round {} task {}: it was made under "
        "another training plan; the round starts over from the global "
        "model",
        resume->name, s->round, s->task_id);
    return std::nullopt;
  }
  if (same_task) return *s;
  spdlog::info(
      "dropping checkpoint {} of round {} task {}: the server now runs "
      "round {} task {}, so that round has closed",
      resume->name, s->round, s->task_id, snapshot.round, snapshot.task_id);
  return std::nullopt;
}

bool CheckpointKeeper::Due(const runtime::TrainCursor& cursor,
                           absl::Time last_save) const {
  if (!store_ || cursor.step == cursor.planned) return false;
  const bool by_count =
      policy_.every_batches > 0 && cursor.step % policy_.every_batches == 0;
  const bool by_time = policy_.every > absl::ZeroDuration() &&
                       clock_.Now() - last_save >= policy_.every;
  return by_count || by_time;
}

void CheckpointKeeper::Save(const TrainingSnapshot& snapshot,
                            runtime::Model& model,
                            torch::optim::Optimizer* optimizer) {
  auto files = EncodeTrainingCheckpoint(snapshot, model, optimizer);
  absl::StatusOr<std::string> saved =
      files.ok() ? store_->Save(*files)
                 : absl::StatusOr<std::string>(files.status());
  if (saved.ok()) {
    ++written_;
    spdlog::debug("checkpoint {} at batch {}/{}", *saved, snapshot.cursor.step,
                  snapshot.cursor.planned);
  } else {
    // Training goes on; the previous checkpoint stays the newest.
    ++failed_;
    spdlog::error("checkpoint at batch {}/{} failed, training goes on: {}",
                  snapshot.cursor.step, snapshot.cursor.planned,
                  saved.status().ToString());
  }
}

}  // namespace fedberry::client
