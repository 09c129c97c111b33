#include "runtime/training_plan.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/log_text.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "runtime/model_zoo.h"
#include "runtime/sha256.h"
#include "runtime/torchscript_model.h"
#include "runtime/update_encoding.h"

namespace fedberry::runtime {
namespace {

constexpr int kMaxDims = 4;
constexpr int64_t kMaxSide = 1 << 16;
constexpr int64_t kMaxSampleValues = 1 << 24;
constexpr uint32_t kMaxOutputs = 1 << 20;
constexpr int kMaxColumns = 1 << 14;
constexpr size_t kMaxColumnName = 256;

bool Known(const std::string& name, const std::vector<std::string>& known) {
  for (const auto& k : known) {
    if (k == name) return true;
  }
  return false;
}

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("training plan: ", field, " ", why));
}

}  // namespace

v1::TrainingPlan DefaultImagePlan(const v1::TrainConfig& config) {
  v1::TrainingPlan plan;
  plan.set_model_format(kBuiltinFormat);
  plan.set_model_name(config.model());
  for (int64_t d : {1, 28, 28}) plan.add_input_shape(d);
  plan.set_task("classification");
  plan.set_num_outputs(10);
  plan.set_loss("cross_entropy");
  plan.set_optimizer("sgd");
  // Unset (0) in a proto3 config: the default job's rate.
  plan.set_learning_rate(config.learning_rate() > 0 ? config.learning_rate()
                                                    : 0.05);
  plan.set_momentum(config.momentum());
  plan.add_input_mean(kFashionMnistMean);
  plan.add_input_std(kFashionMnistStd);
  return plan;
}

namespace {

// The model: built in by name, or a TorchScript file by hash and size.
absl::Status CheckPlanModel(const v1::TrainingPlan& plan) {
  if (plan.model_format() == kBuiltinFormat) {
    if (!IsZooModel(plan.model_name())) {
      return Bad("model_name",
                 absl::StrCat("'", base::Printable(plan.model_name(), 64),
                              "' is not a built-in model"));
    }
  } else if (plan.model_format() == kTorchScriptFormat) {
    if (!IsSha256Hex(plan.model_sha256())) {
      return Bad("model_sha256", "is not 64 lowercase hex digits");
    }
    if (plan.model_bytes() == 0 || plan.model_bytes() > kMaxModelFileBytes) {
      return Bad("model_bytes",
                 absl::StrCat(plan.model_bytes(), " is outside 1..",
                              kMaxModelFileBytes));
    }
  } else {
    return Bad("model_format",
               absl::StrCat("'", base::Printable(plan.model_format(), 32),
                            "' is unknown (builtin, torchscript)"));
  }
  if (plan.model_name().size() > kMaxColumnName) {
    return Bad("model_name", "is too long");
  }
  return absl::OkStatus();
}

// The input shape; the values in one sample.
absl::StatusOr<int64_t> CheckPlanShape(const v1::TrainingPlan& plan) {
  if (plan.input_shape().empty() || plan.input_shape_size() > kMaxDims) {
    return Bad("input_shape",
               absl::StrCat("has ", plan.input_shape_size(),
                            " dimensions; 1 to ", kMaxDims, " are allowed"));
  }
  int64_t values = 1;
  for (int64_t d : plan.input_shape()) {
    if (d < 1 || d > kMaxSide) {
      return Bad("input_shape", absl::StrCat("has a side of ", d));
    }
    values *= d;
    if (values > kMaxSampleValues) return Bad("input_shape", "is too large");
  }
  return values;
}

// The task, the outputs, the loss and the optimizer's settings.
absl::Status CheckPlanTraining(const v1::TrainingPlan& plan) {
  absl::StatusOr<TaskKind> task = ParseTaskKind(plan.task());
  if (!task.ok()) return Bad("task", task.status().message());
  if (plan.num_outputs() < 1 || plan.num_outputs() > kMaxOutputs) {
    return Bad("num_outputs", absl::StrCat(plan.num_outputs(),
                                           " is outside 1..", kMaxOutputs));
  }
  if (!Known(plan.loss(), LossNames())) {
    return Bad("loss", absl::StrCat("'", base::Printable(plan.loss(), 32),
                                    "' is unknown"));
  }
  if (!Known(plan.optimizer(), OptimizerNames())) {
    return Bad("optimizer",
               absl::StrCat("'", base::Printable(plan.optimizer(), 32),
                            "' is unknown"));
  }
  if (!(plan.learning_rate() > 0) || !std::isfinite(plan.learning_rate())) {
    return Bad("learning_rate", "is not a positive number");
  }
  for (double v : {plan.momentum(), plan.weight_decay()}) {
    if (!(v >= 0) || !std::isfinite(v)) {
      return Bad("momentum/weight_decay", "must be finite and >= 0");
    }
  }
  return absl::OkStatus();
}

// The data's binding: normalisation (at most `values` values) and columns.
absl::Status CheckPlanData(const v1::TrainingPlan& plan, int64_t values) {
  if (plan.input_mean_size() > values || plan.input_std_size() > values) {
    return Bad("input_mean/input_std", "have more values than an input");
  }
  for (float v : plan.input_mean()) {
    if (!std::isfinite(v)) return Bad("input_mean", "is not finite");
  }
  for (float v : plan.input_std()) {
    if (!(v > 0) || !std::isfinite(v)) {
      return Bad("input_std", "is not a positive number");
    }
  }
  if (plan.feature_columns_size() > kMaxColumns) {
    return Bad("feature_columns", "has too many names");
  }
  for (const std::string& c : plan.feature_columns()) {
    if (c.size() > kMaxColumnName) return Bad("feature_columns", "too long");
  }
  if (plan.label_column().size() > kMaxColumnName) {
    return Bad("label_column", "is too long");
  }
  return absl::OkStatus();
}

// The strategy, the encodings and what trains.
absl::Status CheckPlanAggregation(const v1::TrainingPlan& plan) {
  if (plan.strategy().size() > 64 ||
      base::FirstUnprintable(plan.strategy()) != absl::string_view::npos) {
    return Bad("strategy", "is not a short printable name");
  }
  if (!(plan.proximal_mu() >= 0) || !(plan.proximal_mu() <= 1e4)) {
    return Bad("proximal_mu",
               absl::StrCat(plan.proximal_mu(), " is outside 0..1e4"));
  }
  if (plan.strategy_parameters_size() > 64) {
    return Bad("strategy_parameters", "has too many entries");
  }
  const v1::Encoding update = plan.update_encoding();
  if (update != v1::ENCODING_UNSPECIFIED && update != v1::ENCODING_RAW &&
      update != v1::ENCODING_FP16 && update != v1::ENCODING_INT8 &&
      update != v1::ENCODING_TOPK) {
    return Bad("update_encoding",
               absl::StrCat(static_cast<int>(update), " is unknown"));
  }
  if (update == v1::ENCODING_TOPK &&
      !(plan.topk_fraction() > 0 && plan.topk_fraction() <= 1)) {
    return Bad("topk_fraction",
               absl::StrCat(plan.topk_fraction(), " is outside (0, 1]"));
  }
  if (plan.trainable_tensors_size() > kMaxColumns) {
    return Bad("trainable_tensors", "has too many names");
  }
  for (const std::string& t : plan.trainable_tensors()) {
    if (t.empty() || t.size() > kMaxColumnName) {
      return Bad("trainable_tensors", "has an empty or too long name");
    }
  }
  const v1::Encoding model = plan.model_encoding();
  if (model != v1::ENCODING_UNSPECIFIED && model != v1::ENCODING_RAW &&
      model != v1::ENCODING_FP16) {
    return Bad("model_encoding",
               absl::StrCat(static_cast<int>(model), " is not raw or fp16"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePlan(const v1::TrainingPlan& plan) {
  if (absl::Status s = CheckPlanModel(plan); !s.ok()) return s;
  absl::StatusOr<int64_t> values = CheckPlanShape(plan);
  if (!values.ok()) return values.status();
  if (absl::Status s = CheckPlanTraining(plan); !s.ok()) return s;
  if (absl::Status s = CheckPlanData(plan, *values); !s.ok()) return s;
  return CheckPlanAggregation(plan);
}

DataBinding BindingOf(const v1::TrainingPlan& plan, bool skip_bad_rows) {
  DataBinding b;
  b.input_shape.assign(plan.input_shape().begin(), plan.input_shape().end());
  b.task = ParseTaskKind(plan.task()).value_or(TaskKind::kClassification);
  b.mean.assign(plan.input_mean().begin(), plan.input_mean().end());
  b.std.assign(plan.input_std().begin(), plan.input_std().end());
  b.label_column = plan.label_column();
  b.feature_columns.assign(plan.feature_columns().begin(),
                           plan.feature_columns().end());
  b.skip_bad_rows = skip_bad_rows;
  return b;
}

TrainOptions TrainOptionsOf(const v1::TrainingPlan& plan,
                            const v1::TrainConfig& config) {
  TrainOptions o;
  o.local_epochs = static_cast<int>(config.local_epochs());
  o.local_steps = static_cast<int64_t>(config.local_steps());
  o.batch_size = static_cast<int64_t>(config.batch_size());
  o.optimizer = plan.optimizer();
  o.learning_rate = plan.learning_rate();
  o.momentum = plan.momentum();
  o.weight_decay = plan.weight_decay();
  o.proximal_mu = plan.proximal_mu();
  return o;
}

std::string ModelIdOf(const v1::TrainingPlan& plan) {
  if (plan.model_format() == kBuiltinFormat) return plan.model_name();
  return absl::StrCat(plan.model_format(), ":", plan.model_sha256());
}

std::string PlanFingerprint(const v1::TrainingPlan& plan) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    plan.SerializeToCodedStream(&coded);
  }
  return Sha256Hex(bytes);
}

absl::StatusOr<std::unique_ptr<Model>> MakePlanModel(
    const v1::TrainingPlan& plan, const VerifiedModelFile* model_file,
    std::vector<std::string>* warnings) {
  if (plan.model_format() == kBuiltinFormat) {
    return MakeZooModel(plan.model_name(),
                        std::vector<int64_t>(plan.input_shape().begin(),
                                             plan.input_shape().end()),
                        plan.num_outputs());
  }
  if (model_file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan's model ", base::Printable(plan.model_name()),
                     " is a file, and none was given"));
  }
  if (model_file->sha256() != plan.model_sha256()) {
    return absl::DataLossError(absl::StrCat(
        "model file ", model_file->path(), " has SHA-256 ",
        model_file->sha256(), "; the plan names ", plan.model_sha256()));
  }
  absl::StatusOr<LoadedScript> loaded = LoadTorchScriptModel(
      model_file->path(), plan.model_name(), model_file->bytes().get());
  if (!loaded.ok()) return loaded.status();
  if (warnings != nullptr) {
    for (auto& w : loaded->warnings) warnings->push_back(std::move(w));
  }
  return std::move(loaded->model);
}

absl::StatusOr<Objective> ObjectiveOf(const v1::TrainingPlan& plan,
                                      const Model& model) {
  absl::StatusOr<TaskKind> task = ParseTaskKind(plan.task());
  if (!task.ok()) return task.status();
  return Objective::Make(*task, plan.loss(), model);
}

std::string DescribePlan(const v1::TrainingPlan& plan) {
  std::string model =
      plan.model_format() == kBuiltinFormat
          ? plan.model_name()
          : absl::StrCat(plan.model_format(), " ",
                         base::Printable(plan.model_name(), 64), " (",
                         plan.model_sha256().substr(0, 12), ", ",
                         plan.model_bytes(), " bytes)");
  std::string out = absl::StrCat(
      model, ", input ", absl::StrJoin(plan.input_shape(), "x"), ", ",
      plan.task(), " with ", plan.num_outputs(), " outputs, loss ", plan.loss(),
      ", ", plan.optimizer(), " lr ", plan.learning_rate());
  if (!plan.strategy().empty() && plan.strategy() != "fedavg") {
    absl::StrAppend(&out, ", strategy ", base::Printable(plan.strategy(), 64));
    // Sorted: the map's own order is not fixed.
    std::map<std::string, double> settings(plan.strategy_parameters().begin(),
                                           plan.strategy_parameters().end());
    if (plan.proximal_mu() > 0) settings["mu"] = plan.proximal_mu();
    std::vector<std::string> parts;
    for (const auto& [k, v] : settings) {
      parts.push_back(absl::StrCat(base::Printable(k, 32), " ", v));
    }
    if (!parts.empty())
      absl::StrAppend(&out, " (", absl::StrJoin(parts, ", "), ")");
  }
  const v1::Encoding up = plan.update_encoding();
  if (up != v1::ENCODING_RAW && up != v1::ENCODING_UNSPECIFIED) {
    absl::StrAppend(&out, ", updates ", EncodingName(up));
    if (up == v1::ENCODING_TOPK) {
      absl::StrAppend(&out, " ", plan.topk_fraction());
    }
  }
  if (plan.model_encoding() == v1::ENCODING_FP16) {
    absl::StrAppend(&out, ", model fp16");
  }
  if (plan.trainable_tensors_size() > 0) {
    absl::StrAppend(
        &out, ", trains ",
        base::Printable(absl::StrJoin(plan.trainable_tensors(), " "), 256),
        " only");
  }
  return out;
}

}  // namespace fedberry::runtime
