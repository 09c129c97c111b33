#include "runtime/objective.h"

#include <torch/torch.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fedberry::runtime {
namespace {

namespace F = torch::nn::functional;

// Binary outputs: one logit per sample ([N] or [N, 1]).
bool IsSingleOutput(const torch::Tensor& output) {
  return output.dim() == 1 || (output.dim() == 2 && output.size(1) == 1);
}

}  // namespace

std::vector<std::string> LossNames() {
  return {"cross_entropy", "mse", "l1", "bce_with_logits", "model"};
}

double MetricSums::Accuracy() const {
  return samples ? static_cast<double>(correct) / samples : 0;
}
double MetricSums::Rmse() const {
  return samples ? std::sqrt(squared / samples) : 0;
}
double MetricSums::Mae() const { return samples ? absolute / samples : 0; }

absl::StatusOr<Objective> Objective::Make(TaskKind task,
                                          const std::string& loss,
                                          const Model& model) {
  const bool classifies = loss == "cross_entropy" || loss == "bce_with_logits";
  const bool regresses = loss == "mse" || loss == "l1";
  if (!classifies && !regresses && loss != "model") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown loss '", loss,
                     "' (known: ", absl::StrJoin(LossNames(), ", "), ")"));
  }
  if (classifies && task != TaskKind::kClassification) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loss ", loss, " is for classification; this job is a regression"));
  }
  if (regresses && task != TaskKind::kRegression) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loss ", loss,
        " is for regression; this job is a classification (use "
        "cross_entropy or bce_with_logits, or --task=regression)"));
  }
  if (loss == "model" && !model.HasOwnLoss()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--loss=model: model ", model.name(),
                     " defines no loss(output, target) method"));
  }
  return Objective(task, loss);
}

torch::Tensor Objective::Targets(const torch::Tensor& labels,
                                 const torch::Tensor& output) const {
  if (task_ == TaskKind::kClassification && loss_ != "bce_with_logits") {
    return labels.to(torch::kInt64);
  }
  if (output.numel() == labels.numel()) return labels.view(output.sizes());
  return labels;
}

torch::Tensor Objective::Loss(Model& model, const torch::Tensor& output,
                              const torch::Tensor& targets) const {
  if (loss_ == "cross_entropy") return F::cross_entropy(output, targets);
  if (loss_ == "bce_with_logits") {
    return F::binary_cross_entropy_with_logits(output, targets);
  }
  if (loss_ == "mse") return F::mse_loss(output, targets);
  if (loss_ == "l1") return F::l1_loss(output, targets);
  return model.OwnLoss(output, targets);
}

void Objective::Score(const torch::Tensor& output, const torch::Tensor& targets,
                      MetricSums* sums) const {
  torch::NoGradGuard no_grad;
  const int64_t n = output.size(0);
  sums->samples += n;
  if (task_ == TaskKind::kClassification) {
    torch::Tensor predicted = IsSingleOutput(output)
                                  ? output.reshape({n}).gt(0).to(torch::kInt64)
                                  : output.argmax(1);
    sums->correct += predicted.eq(targets.reshape({n}).to(torch::kInt64))
                         .sum()
                         .item<int64_t>();
    return;
  }
  torch::Tensor error = (output.detach().reshape({n, -1}) -
                         targets.reshape({n, -1}).to(output.scalar_type()))
                            .to(torch::kFloat64);
  sums->squared += error.square().sum().item<double>();
  sums->absolute += error.abs().sum().item<double>();
}

absl::Status Objective::Check(Model& model, const torch::Tensor& output,
                              const torch::Tensor& labels,
                              int64_t label_count) const {
  const int64_t n = labels.size(0);
  auto shape = [](const torch::Tensor& t) { return c10::str(t.sizes()); };
  if (output.dim() == 0 || output.size(0) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model ", model.name(), " returned output of shape ", shape(output),
        " for a batch of ", n, " samples; expected [", n, ", outputs]"));
  }
  if (task_ == TaskKind::kClassification) {
    if (loss_ == "bce_with_logits" && !IsSingleOutput(output)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bce_with_logits needs one logit per sample ([", n, "] or [", n,
          ", 1]); model ", model.name(), " returned ", shape(output)));
    }
    if (loss_ == "bce_with_logits" && label_count > 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("bce_with_logits is binary; the data has ", label_count,
                       " classes (use cross_entropy)"));
    }
    if (loss_ == "cross_entropy" &&
        (output.dim() != 2 || output.size(1) < label_count)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model ", model.name(), " returned output of shape ", shape(output),
          "; the data has ", label_count, " classes, so cross_entropy needs [",
          n, ", ", label_count, "] or more outputs"));
    }
  } else if (output.numel() != labels.numel()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model ", model.name(), " returned output of shape ", shape(output),
        " for ", n, " regression targets; expected [", n, "] or [", n, ", 1]"));
  }
  try {
    torch::Tensor targets = Targets(labels, output);
    torch::Tensor loss = Loss(model, output, targets);
    if (loss.numel() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("loss ", loss_, " of model ", model.name(),
                       " returned shape ", shape(loss), "; expected a scalar"));
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("loss ", loss_, " does not fit model ", model.name(),
                     "'s output ", shape(output), " and targets ",
                     shape(labels), ": ", DescribeTorchError(e)));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::runtime
