#include "server/job_plan.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "runtime/model_zoo.h"
#include "runtime/torchscript_model.h"
#include "runtime/trainable_set.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"
#include "runtime/update_encoding.h"

namespace fedberry::server {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The plan's normalisation: the request's, else what the data implies (IDX
// data, or a built-in model of 28x28 images without data: Fashion-MNIST's;
// CSV rows: the evaluation rows' mean and deviation), else none, with a
// warning when there was no evaluation data to take one from.
runtime::InputStats ChooseNormalisation(const JobPlanRequest& r,
                                        const std::string& eval_kind,
                                        bool builtin,
                                        const std::vector<int64_t>& shape,
                                        const runtime::Dataset* eval,
                                        std::vector<std::string>& warnings) {
  runtime::InputStats norm{r.input_mean, r.input_std};
  if (norm.mean.empty() && norm.std.empty()) {
    if (eval_kind == "idx" || (eval_kind.empty() && builtin &&
                               shape == std::vector<int64_t>{1, 28, 28})) {
      return {{runtime::kFashionMnistMean}, {runtime::kFashionMnistStd}};
    }
    if (eval_kind == "csv") return runtime::ComputeInputStats(*eval);
  }
  if (norm.mean.empty() && eval_kind.empty()) {
    // Nothing to take it from: a model trained on normalised inputs (as
    // most pretrained ones are) would see raw ones on the boards.
    warnings.push_back(
        "no input normalisation: without --eval_data the server cannot take "
        "one from the data, so boards feed pixels in [0, 1] (rows as they "
        "are); give --input_mean and --input_std if the model expects "
        "normalised inputs (Fashion-MNIST: 0.2860 and 0.3530)");
  }
  return norm;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ParseShape(const std::string& text,
                                                const char* flag) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v) || v < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, "=", text, ": '", part, "' is not a positive integer"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::vector<float>> ParseFloats(const std::string& text,
                                               const char* flag) {
  std::vector<float> out;
  if (text.empty()) return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    float v = 0;
    if (!absl::SimpleAtof(absl::StripAsciiWhitespace(part), &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, "=", text, ": '", part, "' is not a number"));
    }
    out.push_back(v);
  }
  return out;
}

namespace {

// The evaluation data, read without normalisation: its shape, classes and
// statistics may complete the plan. Sets `job.eval` and `eval_kind` (both
// left empty without --eval_data).
absl::Status OpenRawEval(const JobPlanRequest& r, runtime::TaskKind task,
                         const runtime::DataOpenOptions& open, JobPlan& job,
                         std::string& eval_kind) {
  if (r.eval_data.empty()) return absl::OkStatus();
  runtime::DataBinding binding;
  binding.task = task;
  binding.input_shape = r.input_shape;
  binding.label_column = r.label_column;
  binding.feature_columns = r.feature_columns;
  binding.skip_bad_rows = r.skip_bad_rows;
  FEDBERRY_ASSIGN_OR_RETURN(runtime::DataSpec spec,
                            runtime::ParseDataSpec(r.eval_data));
  eval_kind = spec.kind;
  absl::StatusOr<std::unique_ptr<runtime::Dataset>> raw =
      runtime::OpenDataset(r.eval_data, binding, open);
  if (!raw.ok()) {
    return absl::Status(raw.status().code(),
                        absl::StrCat("evaluation data ", r.eval_data, ": ",
                                     raw.status().message()));
  }
  job.eval = *std::move(raw);
  return absl::OkStatus();
}

// A sample's shape: the request's, else the evaluation data's, else a
// built-in model's 28x28 images.
absl::StatusOr<std::vector<int64_t>> PlanShape(const JobPlanRequest& r,
                                               bool builtin,
                                               const runtime::Dataset* eval) {
  if (!r.input_shape.empty()) return r.input_shape;
  if (eval != nullptr) return eval->sample_shape();
  if (builtin) return std::vector<int64_t>{1, 28, 28};
  return absl::InvalidArgumentError(
      absl::StrCat("model ", r.model,
                   ": give --input_shape (e.g. 3,32,32 or 12) or "
                   "--eval_data, so the plan knows what a sample looks like"));
}

// The model's outputs: the request's, else 1 target, the evaluation data's
// classes, or 10.
uint32_t PlanOutputs(const JobPlanRequest& r, runtime::TaskKind task,
                     const runtime::Dataset* eval) {
  if (r.num_outputs != 0) return r.num_outputs;
  if (task == runtime::TaskKind::kRegression) return 1;
  if (eval != nullptr) return static_cast<uint32_t>(eval->label_count());
  return 10;
}

// The strategy, the wire encodings and the boards' optimizer.
absl::Status SetAggregation(const JobPlanRequest& r, v1::TrainingPlan& plan) {
  plan.set_strategy(r.strategy);
  plan.set_proximal_mu(r.proximal_mu);
  for (const auto& [k, v] : r.strategy_parameters) {
    (*plan.mutable_strategy_parameters())[k] = v;
  }
  FEDBERRY_ASSIGN_OR_RETURN(v1::Encoding update,
                            runtime::ParseEncoding(r.update_encoding));
  FEDBERRY_ASSIGN_OR_RETURN(v1::Encoding model_encoding,
                            runtime::ParseEncoding(r.model_encoding));
  if (model_encoding != v1::ENCODING_RAW &&
      model_encoding != v1::ENCODING_FP16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--model_encoding=", r.model_encoding,
        ": the model travels raw or fp16 (boards have no model to take a "
        "difference from)"));
  }
  plan.set_update_encoding(update);
  plan.set_model_encoding(model_encoding);
  if (update == v1::ENCODING_TOPK) plan.set_topk_fraction(r.topk_fraction);
  plan.set_optimizer(r.optimizer);
  plan.set_learning_rate(r.learning_rate);
  plan.set_momentum(r.momentum);
  plan.set_weight_decay(r.weight_decay);
  return absl::OkStatus();
}

// The model (built in, or a TorchScript file read once and served), the
// loss and what trains: into `job.plan`, `job.model_file` and `job.model`.
absl::Status SetModel(const JobPlanRequest& r, runtime::TaskKind task,
                      bool builtin, JobPlan& job) {
  v1::TrainingPlan& plan = job.plan;
  if (builtin) {
    plan.set_model_format(runtime::kBuiltinFormat);
    plan.set_model_name(r.model);
  } else {
    FEDBERRY_ASSIGN_OR_RETURN(std::string bytes, ReadFile(r.model));
    plan.set_model_format(runtime::kTorchScriptFormat);
    plan.set_model_name(std::filesystem::path(r.model).filename().string());
    plan.set_model_bytes(bytes.size());
    if (bytes.size() > runtime::kMaxModelFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("model file ", r.model, " has ", bytes.size(),
                       " bytes; at most ", runtime::kMaxModelFileBytes));
    }
    job.model_file = std::make_shared<const std::string>(std::move(bytes));
  }
  // The model loads from the very bytes that were hashed and are served.
  std::optional<runtime::VerifiedModelFile> file;
  if (job.model_file) {
    file = runtime::VerifiedModelFile::InMemory(r.model, job.model_file);
    plan.set_model_sha256(file->sha256());
  }
  FEDBERRY_ASSIGN_OR_RETURN(
      job.model,
      runtime::MakePlanModel(plan, file ? &*file : nullptr, &job.warnings));
  std::string loss = r.loss;
  if (loss.empty()) {
    loss = job.model->HasOwnLoss()                  ? "model"
           : task == runtime::TaskKind::kRegression ? "mse"
                                                    : "cross_entropy";
  }
  plan.set_loss(loss);
  if (!r.trainable.empty()) {
    FEDBERRY_ASSIGN_OR_RETURN(
        std::vector<std::string> trainable,
        runtime::ResolveTrainable(job.model->State(),
                                  job.model->Parameters().size(), r.trainable));
    for (auto& name : trainable) plan.add_trainable_tensors(std::move(name));
  }
  return absl::OkStatus();
}

// The evaluation data opened again with the plan's normalisation, as every
// board reads its data, and run through the model and the loss.
absl::Status CheckEvalData(const JobPlanRequest& r, runtime::TaskKind task,
                           const runtime::DataOpenOptions& open, JobPlan& job) {
  if (!job.eval) return absl::OkStatus();
  FEDBERRY_ASSIGN_OR_RETURN(
      job.eval,
      runtime::OpenDataset(
          r.eval_data, runtime::BindingOf(job.plan, r.skip_bad_rows), open));
  absl::Status fits =
      runtime::CheckModelOnData(*job.model, *job.eval, *job.objective);
  if (!fits.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(fits.message(), " [evaluation data ", r.eval_data, ": ",
                     job.eval->Describe(), "]"));
  }
  const uint32_t outputs = job.plan.num_outputs();
  if (task == runtime::TaskKind::kClassification &&
      job.eval->label_count() > static_cast<int64_t>(outputs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("evaluation data ", r.eval_data, " has ",
                     job.eval->label_count(), " classes; the plan's model has ",
                     outputs, " outputs (--num_outputs)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<JobPlan> BuildJobPlan(const JobPlanRequest& r) {
  JobPlan job;
  v1::TrainingPlan& plan = job.plan;
  FEDBERRY_ASSIGN_OR_RETURN(runtime::TaskKind task,
                            runtime::ParseTaskKind(r.task));
  plan.set_task(runtime::TaskKindName(task));
  const bool builtin = runtime::IsZooModel(r.model);
  runtime::DataOpenOptions open;
  open.split = runtime::Split::kTest;
  open.cache_dir = r.cache_dir;
  std::string eval_kind;
  FEDBERRY_RETURN_IF_ERROR(OpenRawEval(r, task, open, job, eval_kind));
  FEDBERRY_ASSIGN_OR_RETURN(const std::vector<int64_t> shape,
                            PlanShape(r, builtin, job.eval.get()));
  for (int64_t d : shape) plan.add_input_shape(d);
  plan.set_num_outputs(PlanOutputs(r, task, job.eval.get()));
  const runtime::InputStats norm = ChooseNormalisation(
      r, eval_kind, builtin, shape, job.eval.get(), job.warnings);
  for (float v : norm.mean) plan.add_input_mean(v);
  for (float v : norm.std) plan.add_input_std(v);
  plan.set_label_column(r.label_column);
  for (const auto& c : r.feature_columns) plan.add_feature_columns(c);
  FEDBERRY_RETURN_IF_ERROR(SetAggregation(r, plan));
  FEDBERRY_RETURN_IF_ERROR(SetModel(r, task, builtin, job));
  FEDBERRY_RETURN_IF_ERROR(runtime::ValidatePlan(plan));
  FEDBERRY_ASSIGN_OR_RETURN(runtime::Objective objective,
                            runtime::ObjectiveOf(plan, *job.model));
  job.objective = objective;
  FEDBERRY_RETURN_IF_ERROR(CheckEvalData(r, task, open, job));
  return job;
}

absl::StatusOr<JobPlan> JobPlanFromParent(
    const v1::TrainingPlan& plan, const runtime::VerifiedModelFile* file) {
  FEDBERRY_RETURN_IF_ERROR(runtime::ValidatePlan(plan));
  JobPlan job;
  job.plan = plan;
  std::optional<runtime::VerifiedModelFile> served;
  if (file != nullptr) {
    std::shared_ptr<const std::string> bytes = file->bytes();
    if (!bytes) {
      FEDBERRY_ASSIGN_OR_RETURN(std::string read, ReadFile(file->path()));
      bytes = std::make_shared<const std::string>(std::move(read));
    }
    // What this gateway serves its boards is what it checked.
    served = runtime::VerifiedModelFile::InMemory(file->path(), bytes);
    if (served->sha256() != plan.model_sha256()) {
      return absl::DataLossError(absl::StrCat(
          "model file ", file->path(), " has SHA-256 ", served->sha256(),
          "; the parent's plan says ", plan.model_sha256()));
    }
    job.model_file = std::move(bytes);
  }
  FEDBERRY_ASSIGN_OR_RETURN(
      job.model,
      runtime::MakePlanModel(plan, served ? &*served : nullptr, &job.warnings));
  FEDBERRY_ASSIGN_OR_RETURN(runtime::Objective objective,
                            runtime::ObjectiveOf(plan, *job.model));
  job.objective = std::move(objective);
  // The parent's trainable set must name this model's parameters, as a
  // board checks: the gateway's coordinator expects updates of it.
  FEDBERRY_RETURN_IF_ERROR(
      runtime::TrainableSet::OfPlan(plan, *job.model).status());
  return job;
}

}  // namespace fedberry::server
