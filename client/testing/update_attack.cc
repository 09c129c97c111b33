#include "client/testing/update_attack.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "client/plan_trainer.h"

namespace fedberry::client {

absl::StatusOr<std::optional<UpdateAttack>> ParseUpdateAttack(
    absl::string_view spec) {
  if (spec.empty()) return std::nullopt;
  const auto refuse = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "--attack='", spec,
        "': expected scale:F or signflip[:F] with a finite, non-zero F"));
  };
  absl::string_view rest = spec;
  double sign = 1;
  if (absl::ConsumePrefix(&rest, "signflip")) {
    sign = -1;
    if (rest.empty()) return UpdateAttack{-1, std::string(spec)};
    if (!absl::ConsumePrefix(&rest, ":")) return refuse();
  } else if (!absl::ConsumePrefix(&rest, "scale:")) {
    return refuse();
  }
  double factor = 0;
  if (!absl::SimpleAtod(rest, &factor) || !std::isfinite(factor) ||
      factor == 0) {
    return refuse();
  }
  return UpdateAttack{sign * factor, std::string(spec)};
}

absl::Status ApplyUpdateAttack(const UpdateAttack& attack,
                               const runtime::NamedTensors& global,
                               runtime::NamedTensors* model) {
  if (model->size() != global.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("attack: trained model has ", model->size(),
                     " tensors, the global model ", global.size()));
  }
  for (size_t i = 0; i < model->size(); ++i) {
    runtime::NamedTensor& t = (*model)[i];
    if (!t.tensor.is_floating_point()) continue;
    if (global[i].name != t.name ||
        !global[i].tensor.sizes().equals(t.tensor.sizes())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attack: tensor '", t.name, "' differs from the global model's"));
    }
    t.tensor = global[i].tensor + attack.factor * (t.tensor - global[i].tensor);
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::NamedTensors> SelectLike(
    const runtime::NamedTensors& global, const runtime::NamedTensors& like) {
  runtime::NamedTensors out;
  out.reserve(like.size());
  size_t from = 0;  // both in model order: search on from the last match
  for (const runtime::NamedTensor& t : like) {
    size_t i = from;
    while (i < global.size() && global[i].name != t.name) ++i;
    if (i == global.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("attack: the global model has no tensor '", t.name,
                       "' (in the update's order)"));
    }
    out.push_back(global[i]);
    from = i + 1;
  }
  return out;
}

absl::Status AttackingTrainer::UsePlan(
    const v1::TrainingPlan& plan,
    const runtime::VerifiedModelFile* model_file) {
  FEDBERRY_RETURN_IF_ERROR(LocalTrainerWrapper::UsePlan(plan, model_file));
  plan_ = plan;
  return absl::OkStatus();
}

absl::StatusOr<TrainOutcome> AttackingTrainer::Train(
    const TaskRef& task, const v1::TrainConfig& config,
    const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
  FEDBERRY_ASSIGN_OR_RETURN(
      TrainOutcome out, LocalTrainerWrapper::Train(task, config, global, stop));
  FEDBERRY_ASSIGN_OR_RETURN(const runtime::NamedTensors sent_global,
                            SelectLike(global, out.model));
  FEDBERRY_RETURN_IF_ERROR(ApplyUpdateAttack(attack_, sent_global, &out.model));
  if (out.encoded.empty()) return out;  // sent RAW: the model is the update
  if (!plan_) {
    return absl::FailedPreconditionError(
        "attack: the update is encoded, but no plan says how");
  }
  // A retried task starts from the leftovers its first run started from.
  runtime::NamedTensors residual_in =
      task.task_id == residual_task_ ? residual_task_in_ : residual_;
  if (!FitsFloatingTensors(residual_in, sent_global)) residual_in.clear();
  residual_task_ = task.task_id;
  residual_task_in_ = residual_in;
  runtime::NamedTensors residual_next;
  FEDBERRY_ASSIGN_OR_RETURN(
      out.encoded, EncodeUpdate(*plan_, out.model, sent_global, residual_in,
                                &residual_next));
  residual_ = std::move(residual_next);
  return out;
}

}  // namespace fedberry::client
