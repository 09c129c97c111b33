// The LocalTrainer of a board: binds the board's data source and the job's
// model to the training plan, then trains rounds with the plan's optimizer
// and loss. With a checkpoint store (kept by client/checkpoint_keeper.h) it
// saves its training state every N batches or S seconds and when local
// training ends, and a restarted client resumes the same task from the
// newest valid checkpoint; state for a task the server has closed is
// dropped. Its updates are privatised and encoded by client/board_update.h
// (EncodeUpdate, FitsFloatingTensors), which this header includes for the
// trainers that wrap it.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_CLIENT_PLAN_TRAINER_H_
#define FEDBERRY_CLIENT_PLAN_TRAINER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "base/clock.h"
#include "checkpoint/checkpoint_store.h"
#include "client/board_update.h"
#include "client/checkpoint_keeper.h"
#include "client/checkpoint_policy.h"
#include "client/local_trainer.h"
#include "client/training_checkpoint.h"
#include "client/training_gate.h"
#include "runtime/dataset.h"
#include "runtime/holdout.h"
#include "runtime/model.h"
#include "runtime/objective.h"
#include "runtime/trainable_set.h"
#include "runtime/trainer.h"

namespace fedberry::client {

// Opens this board's data as the plan's binding says.
using DataOpener =
    std::function<absl::StatusOr<std::unique_ptr<runtime::Dataset>>(
        const runtime::DataBinding&)>;

// An opener over in-memory images (IDX shards in tests and fleets).
DataOpener ImagesOpener(runtime::ImageDataset images);

class PlanTrainer : public LocalTrainer {
 public:
  // `seed_salt` makes this board's data order differ from other boards'.
  // `store` (may be null: no checkpoints) is read once here for a state to
  // resume. Until UsePlan is called the trainer follows the built-in image
  // plan of each round's config (runtime::DefaultImagePlan). Checkpoints
  // by time, and the times reported, are on `clock`.
  PlanTrainer(DataOpener open_data, uint64_t seed_salt,
              std::unique_ptr<checkpoint::CheckpointStore> store = nullptr,
              CheckpointPolicy policy = {}, Clock& clock = Clock::Real());
  PlanTrainer(runtime::ImageDataset data, uint64_t seed_salt,
              std::unique_ptr<checkpoint::CheckpointStore> store = nullptr,
              CheckpointPolicy policy = {}, Clock& clock = Clock::Real());

  absl::Status UsePlan(const v1::TrainingPlan& plan,
                       const runtime::VerifiedModelFile* model_file) override;
  uint64_t num_samples() const override;
  uint64_t sample_bytes() const override;
  absl::StatusOr<runtime::ImageDataset> SamplesToLend(
      const TaskRef& task, const v1::TrainConfig& config,
      uint64_t count) override;
  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;
  absl::StatusOr<BoardEvalOutcome> Evaluate(
      const TaskRef& task, const v1::TrainConfig& config,
      const runtime::NamedTensors& global,
      const std::atomic<bool>& stop) override;
  void JobDone() override;
  // Asked at every batch boundary (may be null: never paused); must outlive
  // the trainer. A memory release it asks for is checkpointed (when there
  // is a store) before Train returns its status.
  void SetGate(TrainingGate* gate) { gate_ = gate; }
  // Skip malformed CSV rows (counted in the log) instead of refusing them.
  void SetSkipBadRows(bool skip) { skip_bad_rows_ = skip; }

  int checkpoints_written() const { return checkpoints_.written(); }
  int checkpoints_failed() const { return checkpoints_.failed(); }

 private:
  // The plan of `config`'s round: UsePlan's, or the built-in default.
  absl::Status EnsurePlan(const v1::TrainConfig& config);
  absl::Status Bind(const v1::TrainingPlan& plan,
                    const runtime::VerifiedModelFile* model_file);
  // `data` cut per the plan's held-out share (none: `data` whole).
  absl::StatusOr<runtime::HoldoutSplit> SplitPerPlan(
      const v1::TrainingPlan& plan, std::unique_ptr<runtime::Dataset> data);
  // The personalised copy's figures: `personalize_steps` steps from the
  // model loaded now on the training share, then evaluated.
  absl::StatusOr<v1::EvalMetrics> Personalize(const TaskRef& task,
                                              const v1::TrainConfig& config,
                                              const std::atomic<bool>& stop);
  // What a training run's after-batch hook keeps between batches.
  struct RunProgress {
    absl::Time last_save;
    int64_t last_logged = 0;
    runtime::TrainCursor final_cursor;
  };
  // After each batch: logs progress, lets the watchdog pause or release
  // at the boundary, and checkpoints per the policy.
  absl::Status AfterBatch(const runtime::TrainCursor& cursor,
                          runtime::Model& net,
                          torch::optim::Optimizer& optimizer,
                          const TaskRef& task, const std::atomic<bool>& stop,
                          TrainingSnapshot& snapshot, RunProgress& progress);
  // The round's samples with its data moves; null without moves (train on
  // data_ as it is).
  absl::StatusOr<std::unique_ptr<runtime::Dataset>> RoundDataFor(
      const TaskRef& task, const v1::TrainConfig& config);
  // The run's outcome from the trained model: the update privatised and
  // encoded as the plan says, its leftovers kept, and (unless the resumed
  // checkpoint was already finished) the finished state `snapshot`
  // checkpointed.
  absl::StatusOr<TrainOutcome> Finish(const v1::TrainConfig& config,
                                      const runtime::TrainResult& result,
                                      const runtime::NamedTensors& sent_global,
                                      const runtime::NamedTensors& residual_in,
                                      bool saved_finished,
                                      TrainingSnapshot& snapshot);
  // The top-k leftovers this run of `task` starts from (see residual_).
  runtime::NamedTensors ResidualFor(
      const TaskRef& task, const std::optional<TrainingSnapshot>& saved,
      const runtime::NamedTensors& sent_global);
  // The rows this board lends first to last in a round of `config`.
  absl::StatusOr<std::vector<int64_t>> LentRowsFor(
      const v1::TrainConfig& config, uint64_t count) const;

  DataOpener open_data_;
  uint64_t seed_salt_;
  CheckpointKeeper checkpoints_;
  Clock& clock_;
  bool skip_bad_rows_ = false;
  // Bound by UsePlan (or EnsurePlan).
  std::optional<v1::TrainingPlan> plan_;
  std::string plan_key_;  // what plan_ was bound from
  bool plan_from_server_ = false;
  // The training share, and the held-out share (null when the plan holds
  // nothing out).
  std::unique_ptr<runtime::Dataset> data_;
  std::unique_ptr<runtime::Dataset> holdout_;
  std::unique_ptr<runtime::Model> model_;
  std::optional<runtime::Objective> objective_;
  // What the plan trains; its updates carry those tensors only.
  runtime::TrainableSet trainable_;
  // Top-k error feedback carried into the next round (see
  // TrainingSnapshot::residual); empty without top-k updates.
  runtime::NamedTensors residual_;
  // The task last trained and the leftovers it started from: a task trained
  // again (its round reopened after a server restart) starts from the same.
  std::string residual_task_;
  runtime::NamedTensors residual_task_in_;
  TrainingGate* gate_ = nullptr;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_PLAN_TRAINER_H_
