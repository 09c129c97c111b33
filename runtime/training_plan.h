// The training plan (v1::TrainingPlan): how every board of a job trains.
// The server makes it from its flags; a board receives it from the wire, so
// it is validated before use, then turned into the runtime's own types: the
// data binding, the training options, the model and the objective.
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_TRAINING_PLAN_H_
#define FEDBERRY_RUNTIME_TRAINING_PLAN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/dataset.h"
#include "runtime/model.h"
#include "runtime/model_file.h"
#include "runtime/objective.h"
#include "runtime/trainer.h"

namespace fedberry::runtime {

inline constexpr char kBuiltinFormat[] = "builtin";
inline constexpr char kTorchScriptFormat[] = "torchscript";
// A model file larger than this is refused (a Pi 3 B+ has 1 GB).
inline constexpr uint64_t kMaxModelFileBytes = uint64_t{256} << 20;

// Fashion-MNIST's pixel statistics (training split, pixels in [0, 1]): the
// normalisation of the default job.
inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;

// The plan of a job that names only a built-in image model `model`: 1x28x28
// inputs normalised with Fashion-MNIST's statistics, 10 classes,
// cross-entropy, SGD with `config`'s learning rate (0.05 when unset) and
// momentum.
v1::TrainingPlan DefaultImagePlan(const v1::TrainConfig& config);

// InvalidArgument naming the field when a plan is malformed or out of
// bounds: unknown format, loss, optimizer or task; a bad hash; an absurd
// input shape or output count; hyper-parameters that are not finite.
absl::Status ValidatePlan(const v1::TrainingPlan& plan);

// The plan's data binding; `skip_bad_rows` is the board's own choice.
DataBinding BindingOf(const v1::TrainingPlan& plan, bool skip_bad_rows);

// Training options of a round: the plan's optimizer and the round's config
// (epochs or steps, batch size, data order seed).
TrainOptions TrainOptionsOf(const v1::TrainingPlan& plan,
                            const v1::TrainConfig& config);

// What identifies the plan's network in checkpoints and logs: the zoo name,
// or "torchscript:" and the file's hash.
std::string ModelIdOf(const v1::TrainingPlan& plan);

// The SHA-256 (hex) of the plan's deterministic wire form: equal for equal
// plans, so a board resumes a checkpoint only under the plan it was made in
// (the optimizer's state and the data's binding depend on all of it).
std::string PlanFingerprint(const v1::TrainingPlan& plan);

// The plan's model: a zoo network (weights from torch's global RNG; no
// file) or the TorchScript `model_file`, verified against the plan's
// SHA-256 (InvalidArgument when it is missing, DataLoss when it was
// verified against another hash). Warnings about the model (e.g. a traced
// module) go to `warnings`.
absl::StatusOr<std::unique_ptr<Model>> MakePlanModel(
    const v1::TrainingPlan& plan, const VerifiedModelFile* model_file,
    std::vector<std::string>* warnings = nullptr);

// The plan's objective for `model`.
absl::StatusOr<Objective> ObjectiveOf(const v1::TrainingPlan& plan,
                                      const Model& model);

// One line for logs: "torchscript model.pt (ab12cd34), input 12, regression,
// mse, adam lr 0.01".
std::string DescribePlan(const v1::TrainingPlan& plan);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TRAINING_PLAN_H_
