#include "client/plan_trainer.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "client/board_update.h"
#include "client/data_loan.h"
#include "client/memory_release.h"
#include "runtime/sample_codec.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"

namespace fedberry::client {
namespace {

v1::EvalMetrics ToMetrics(const runtime::EvalResult& r) {
  v1::EvalMetrics m;
  m.set_samples(static_cast<uint64_t>(r.samples));
  m.set_loss(r.mean_loss);
  m.set_accuracy(r.accuracy);
  m.set_rmse(r.rmse);
  m.set_mae(r.mae);
  return m;
}

uint64_t EntropySeed() {
  std::random_device entropy;
  return (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
}

}  // namespace

DataOpener ImagesOpener(runtime::ImageDataset images) {
  auto shared =
      std::make_shared<const runtime::ImageDataset>(std::move(images));
  return [shared](const runtime::DataBinding& binding)
             -> absl::StatusOr<std::unique_ptr<runtime::Dataset>> {
    return runtime::MakeImageRowsDataset(shared, binding);
  };
}

PlanTrainer::PlanTrainer(runtime::ImageDataset data, uint64_t seed_salt,
                         std::unique_ptr<checkpoint::CheckpointStore> store,
                         CheckpointPolicy policy, Clock& clock)
    : PlanTrainer(ImagesOpener(std::move(data)), seed_salt, std::move(store),
                  policy, clock) {
  // Known before any plan arrives (the default plan's binding).
  runtime::DataBinding binding;
  binding.mean = {runtime::kFashionMnistMean};
  binding.std = {runtime::kFashionMnistStd};
  if (auto opened = open_data_(binding); opened.ok())
    data_ = *std::move(opened);
}

PlanTrainer::PlanTrainer(DataOpener open_data, uint64_t seed_salt,
                         std::unique_ptr<checkpoint::CheckpointStore> store,
                         CheckpointPolicy policy, Clock& clock)
    : open_data_(std::move(open_data)),
      seed_salt_(seed_salt),
      checkpoints_(std::move(store), policy, clock),
      clock_(clock),
      residual_(checkpoints_.TakeFoundResidual()) {}

void PlanTrainer::JobDone() { checkpoints_.DropFound(); }

absl::Status PlanTrainer::UsePlan(
    const v1::TrainingPlan& plan,
    const runtime::VerifiedModelFile* model_file) {
  FEDBERRY_RETURN_IF_ERROR(Bind(plan, model_file));
  plan_from_server_ = true;
  return absl::OkStatus();
}

absl::Status PlanTrainer::Bind(const v1::TrainingPlan& plan,
                               const runtime::VerifiedModelFile* model_file) {
  std::string key = absl::StrCat(plan.SerializeAsString(), "\n",
                                 model_file ? model_file->path() : "");
  if (plan_ && key == plan_key_) return absl::OkStatus();
  FEDBERRY_RETURN_IF_ERROR(runtime::ValidatePlan(plan));
  std::vector<std::string> warnings;
  FEDBERRY_ASSIGN_OR_RETURN(
      std::unique_ptr<runtime::Model> model,
      runtime::MakePlanModel(plan, model_file, &warnings));
  for (const auto& w : warnings) spdlog::warn("{}", w);
  FEDBERRY_ASSIGN_OR_RETURN(runtime::Objective objective,
                            runtime::ObjectiveOf(plan, *model));
  FEDBERRY_ASSIGN_OR_RETURN(
      std::unique_ptr<runtime::Dataset> data,
      open_data_(runtime::BindingOf(plan, skip_bad_rows_)));
  if (data->size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("this board has no samples: ", data->Describe()));
  }
  FEDBERRY_ASSIGN_OR_RETURN(runtime::TrainableSet trainable,
                            runtime::TrainableSet::OfPlan(plan, *model));
  FEDBERRY_RETURN_IF_ERROR(runtime::CheckModelOnData(*model, *data, objective));
  if (objective.task() == runtime::TaskKind::kClassification &&
      data->label_count() > static_cast<int64_t>(plan.num_outputs())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "this board's data has ", data->label_count(),
        " classes; the plan's model has ", plan.num_outputs(), " outputs"));
  }
  FEDBERRY_ASSIGN_OR_RETURN(runtime::HoldoutSplit split,
                            SplitPerPlan(plan, std::move(data)));
  plan_ = plan;
  plan_key_ = std::move(key);
  model_ = std::move(model);
  objective_ = std::move(objective);
  trainable_ = std::move(trainable);
  data_ = std::move(split.train);
  holdout_ = std::move(split.holdout);
  return absl::OkStatus();
}

absl::StatusOr<runtime::HoldoutSplit> PlanTrainer::SplitPerPlan(
    const v1::TrainingPlan& plan, std::unique_ptr<runtime::Dataset> data) {
  if (plan.eval_holdout_fraction() <= 0) {
    return runtime::HoldoutSplit{std::move(data), nullptr};
  }
  const int64_t size = data->size();
  absl::StatusOr<runtime::HoldoutSplit> split = runtime::SplitHoldout(
      std::shared_ptr<const runtime::Dataset>(std::move(data)),
      plan.eval_holdout_fraction(), plan.eval_holdout_seed());
  if (!split.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job evaluates on the boards: ", split.status().message()));
  }
  spdlog::info(
      "holding out {} of this board's {} samples for evaluation on the "
      "boards (never trained on)",
      split->holdout->size(), size);
  return split;
}

absl::Status PlanTrainer::EnsurePlan(const v1::TrainConfig& config) {
  if (plan_from_server_) return absl::OkStatus();
  // No plan from the server: the built-in image plan of the config.
  return Bind(runtime::DefaultImagePlan(config), nullptr);
}

uint64_t PlanTrainer::num_samples() const {
  return data_ ? static_cast<uint64_t>(data_->size()) : 0;
}

uint64_t PlanTrainer::sample_bytes() const {
  const runtime::ImageDataset* rows = data_ ? data_->lendable() : nullptr;
  return rows != nullptr ? runtime::SampleBytes(*rows) : 0;
}

absl::StatusOr<std::vector<int64_t>> PlanTrainer::LentRowsFor(
    const v1::TrainConfig& config, uint64_t count) const {
  // The board's own order, drawn from the round's seed and its salt: the
  // rows it hands over and the rows it then leaves out are the same ones.
  const runtime::ImageDataset* rows = data_ ? data_->lendable() : nullptr;
  if (rows == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("this board's data (",
                     data_ ? data_->Describe() : std::string("not opened"),
                     ") cannot lend samples"));
  }
  return LentRows(rows->rows, count,
                  config.seed() * 0x9E3779B97F4A7C15ull + seed_salt_ * 31 + 7);
}

absl::StatusOr<runtime::ImageDataset> PlanTrainer::SamplesToLend(
    const TaskRef& task, const v1::TrainConfig& config, uint64_t count) {
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<int64_t> rows,
                            LentRowsFor(config, count));
  return SelectRows(*data_->lendable(), rows);
}

absl::Status PlanTrainer::AfterBatch(const runtime::TrainCursor& cursor,
                                     runtime::Model& net,
                                     torch::optim::Optimizer& optimizer,
                                     const TaskRef& task,
                                     const std::atomic<bool>& stop,
                                     TrainingSnapshot& snapshot,
                                     RunProgress& progress) {
  if (cursor.step * 4 / cursor.planned !=
      progress.last_logged * 4 / cursor.planned) {
    spdlog::info("training: {}/{} batches", cursor.step, cursor.planned);
  }
  progress.last_logged = cursor.step;
  if (task.progress) task.progress(cursor.step, cursor.planned);
  if (cursor.step == cursor.planned) progress.final_cursor = cursor;
  if (gate_ != nullptr && cursor.step < cursor.planned) {
    // A batch boundary: the watchdog may pause here, or release memory.
    if (absl::Status go = gate_->AtBatchBoundary(stop); !go.ok()) {
      if (IsMemoryRelease(go) && checkpoints_.enabled()) {
        snapshot.cursor = cursor;
        checkpoints_.Save(snapshot, net, &optimizer);
        go = gate_->Release(std::move(go));  // OK: restored, go on
      }
      if (!go.ok()) return go;
    }
  }
  if (checkpoints_.Due(cursor, progress.last_save)) {
    snapshot.cursor = cursor;
    checkpoints_.Save(snapshot, net, &optimizer);
    progress.last_save = clock_.Now();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<runtime::Dataset>> PlanTrainer::RoundDataFor(
    const TaskRef& task, const v1::TrainConfig& config) {
  if (task.data == nullptr ||
      (task.data->lent == 0 && task.data->borrowed.empty())) {
    return nullptr;
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<int64_t> lent,
                            LentRowsFor(config, task.data->lent));
  FEDBERRY_ASSIGN_OR_RETURN(
      runtime::ImageDataset rows,
      RoundDataset(*data_->lendable(), lent, task.data->borrowed,
                   static_cast<int>(plan_->num_outputs())));
  std::unique_ptr<runtime::Dataset> round_data = runtime::MakeImageRowsDataset(
      std::move(rows), runtime::BindingOf(*plan_, skip_bad_rows_));
  spdlog::info(
      "round {}: training on {} samples ({} own, {} lent, {} "
      "received)",
      task.round, round_data->size(), data_->size(), task.data->lent,
      round_data->size() -
          (data_->size() - static_cast<int64_t>(task.data->lent)));
  return round_data;
}

runtime::NamedTensors PlanTrainer::ResidualFor(
    const TaskRef& task, const std::optional<TrainingSnapshot>& saved,
    const runtime::NamedTensors& sent_global) {
  // The resumed checkpoint's, else what the last round left (when it fits
  // this model).
  runtime::NamedTensors residual_in = saved ? saved->residual
                                      : task.task_id == residual_task_
                                          ? residual_task_in_
                                          : residual_;
  if (!FitsFloatingTensors(residual_in, sent_global)) {
    if (!residual_in.empty()) {
      spdlog::info("dropping top-k leftovers of another model");
    }
    residual_in.clear();
  }
  residual_task_ = task.task_id;
  residual_task_in_ = residual_in;
  return residual_in;
}

absl::StatusOr<TrainOutcome> PlanTrainer::Train(
    const TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  FEDBERRY_RETURN_IF_ERROR(EnsurePlan(config));
  runtime::Model& net = *model_;
  runtime::TrainOptions options = runtime::TrainOptionsOf(*plan_, config);
  options.seed = config.seed() * 1315423911u + seed_salt_;
  options.trainable = trainable_.TrainingParameters();
  // What an update carries of the global model (all of it unless the plan
  // freezes some parameters).
  const runtime::NamedTensors sent_global = trainable_.Select(global);

  TrainingSnapshot snapshot;
  snapshot.round = task.round;
  snapshot.task_id = task.task_id;
  snapshot.model = runtime::ModelIdOf(*plan_);
  snapshot.plan = runtime::PlanFingerprint(*plan_);
  snapshot.data_seed = options.seed;
  // Resume the task the checkpoint belongs to; drop state of closed ones.
  std::optional<checkpoint::LoadedCheckpoint> resume;
  const std::optional<TrainingSnapshot> saved =
      checkpoints_.TakeResumable(snapshot, resume);
  // Top-k error feedback into this round.
  const runtime::NamedTensors residual_in =
      ResidualFor(task, saved, sent_global);
  snapshot.residual = residual_in;
  snapshot.noise_seed = saved ? saved->noise_seed : EntropySeed();
  runtime::TrainHooks hooks;
  hooks.stop = &stop;
  hooks.clock = &clock_;
  // FedProx pulls towards the round's global model: its parameters are the
  // first of its tensors (Model::State lists parameters, then buffers).
  std::vector<torch::Tensor> anchor;
  if (options.proximal_mu > 0) {
    const size_t parameters = net.Parameters().size();
    for (size_t i = 0; i < parameters && i < global.size(); ++i) {
      anchor.push_back(global[i].tensor);
    }
    hooks.proximal_anchor = &anchor;
  }
  if (saved) {
    FEDBERRY_RETURN_IF_ERROR(RestoreModel(*resume, net));
    FEDBERRY_RETURN_IF_ERROR(RestoreRng(*resume));
    spdlog::info("resuming round {} from checkpoint {} at batch {}/{}",
                 task.round, resume->name, saved->cursor.step,
                 saved->cursor.planned);
    hooks.resume = &saved->cursor;
    hooks.restore_optimizer = [&](torch::optim::Optimizer& o) {
      return saved->finished ? absl::OkStatus() : RestoreOptimizer(*resume, o);
    };
  } else {
    FEDBERRY_RETURN_IF_ERROR(net.LoadState(global));
  }
  RunProgress progress;
  progress.last_save = clock_.Now();
  progress.last_logged = saved ? saved->cursor.step : 0;
  progress.final_cursor = saved ? saved->cursor : runtime::TrainCursor{};
  hooks.after_batch = [&](const runtime::TrainCursor& cursor, runtime::Model& n,
                          torch::optim::Optimizer& optimizer) {
    return AfterBatch(cursor, n, optimizer, task, stop, snapshot, progress);
  };
  if (gate_ != nullptr) {
    hooks.micro_batches = [this] { return gate_->micro_batches(); };
  }
  // With data moves: this round's own samples less those lent, plus those
  // received (a copy for the round; without moves, no copy).
  FEDBERRY_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Dataset> round_data,
                            RoundDataFor(task, config));
  const runtime::Dataset& data = round_data ? *round_data : *data_;
  FEDBERRY_ASSIGN_OR_RETURN(
      runtime::TrainResult result,
      runtime::Train(net, data, *objective_, options, hooks));
  snapshot.cursor = progress.final_cursor;
  return Finish(config, result, sent_global, residual_in,
                saved && saved->finished, snapshot);
}

absl::StatusOr<TrainOutcome> PlanTrainer::Finish(
    const v1::TrainConfig& config, const runtime::TrainResult& result,
    const runtime::NamedTensors& sent_global,
    const runtime::NamedTensors& residual_in, bool saved_finished,
    TrainingSnapshot& snapshot) {
  runtime::Model& net = *model_;
  TrainOutcome out;
  out.model = trainable_.Select(net.State());
  FEDBERRY_RETURN_IF_ERROR(
      PrivatizeUpdate(config, sent_global, snapshot.noise_seed, out));
  // The update as the plan sends it; the same from a resumed finished
  // checkpoint (same model, global and leftovers in), so a re-push after a
  // kill sends what the first push did.
  runtime::NamedTensors residual_next;
  FEDBERRY_ASSIGN_OR_RETURN(
      out.encoded, EncodeUpdate(*plan_, out.model, sent_global, residual_in,
                                &residual_next));
  if (checkpoints_.enabled() && !saved_finished) {
    // End of local training: a kill during the push costs no retraining.
    snapshot.finished = true;
    snapshot.residual_next = residual_next;
    checkpoints_.Save(snapshot, net, nullptr);
  }
  residual_ = std::move(residual_next);
  out.num_samples = static_cast<uint64_t>(result.samples);
  out.metrics.set_train_loss(result.mean_loss);
  out.metrics.set_train_accuracy(result.accuracy);
  out.metrics.set_train_seconds(result.seconds);
  out.metrics.set_steps(static_cast<uint64_t>(result.steps));
  return out;
}

absl::StatusOr<BoardEvalOutcome> PlanTrainer::Evaluate(
    const TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  FEDBERRY_RETURN_IF_ERROR(EnsurePlan(config));
  if (!holdout_) {
    return absl::FailedPreconditionError(
        "this board holds out no samples: the job's plan asks for no "
        "evaluation on the boards");
  }
  if (gate_ != nullptr) {
    if (std::string busy = gate_->BusyReason(); !busy.empty()) {
      return absl::UnavailableError(busy);
    }
  }
  const absl::Time start = clock_.Now();
  FEDBERRY_RETURN_IF_ERROR(model_->LoadState(global));
  FEDBERRY_ASSIGN_OR_RETURN(runtime::EvalResult result,
                            runtime::Evaluate(*model_, *holdout_, *objective_));
  BoardEvalOutcome out;
  out.global = ToMetrics(result);
  if (plan_->personalize_steps() > 0) {
    FEDBERRY_ASSIGN_OR_RETURN(out.personalized,
                              Personalize(task, config, stop));
  }
  out.seconds = absl::ToDoubleSeconds(clock_.Now() - start);
  return out;
}

absl::StatusOr<v1::EvalMetrics> PlanTrainer::Personalize(
    const TaskRef& task, const v1::TrainConfig& config,
    const std::atomic<bool>& stop) {
  runtime::TrainOptions options = runtime::TrainOptionsOf(*plan_, config);
  options.local_steps = plan_->personalize_steps();
  options.proximal_mu = 0;  // the board's own model: nothing to stay near
  // What the job trains (--trainable): a board that can only fine-tune
  // the head personalises the head too.
  options.trainable = trainable_.TrainingParameters();
  // Not the round's training order: another draw of the board's samples.
  options.seed = (task.round + 1) * 2654435761u + seed_salt_;
  runtime::TrainHooks hooks;
  hooks.stop = &stop;
  hooks.clock = &clock_;
  if (gate_ != nullptr) {
    hooks.micro_batches = [this] { return gate_->micro_batches(); };
  }
  // The model is the global one now; the copy trained here is never sent
  // (every training run loads its round's model or checkpoint first).
  FEDBERRY_RETURN_IF_ERROR(
      runtime::Train(*model_, *data_, *objective_, options, hooks).status());
  FEDBERRY_ASSIGN_OR_RETURN(runtime::EvalResult result,
                            runtime::Evaluate(*model_, *holdout_, *objective_));
  return ToMetrics(result);
}

}  // namespace fedberry::client
