// What training minimises and evaluation reports: the loss a plan names and
// the task's metrics (accuracy for classification, RMSE and MAE for
// regression), over a model's outputs and a source's float labels.
// Thread-safety: an Objective is immutable; MetricSums is a plain value.
#ifndef FEDBERRY_RUNTIME_OBJECTIVE_H_
#define FEDBERRY_RUNTIME_OBJECTIVE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/dataset.h"
#include "runtime/model.h"

namespace fedberry::runtime {

// Loss names a plan may carry.
std::vector<std::string> LossNames();

// Sums over batches, turned into figures at the end.
struct MetricSums {
  int64_t samples = 0;
  int64_t correct = 0;  // classification
  double squared = 0;   // regression: sum of squared errors
  double absolute = 0;  // regression: sum of absolute errors
  double Accuracy() const;
  double Rmse() const;
  double Mae() const;
};

class Objective {
 public:
  // InvalidArgument for an unknown loss, one that does not fit the task
  // (cross_entropy and bce_with_logits classify, mse and l1 regress), or
  // "model" when `model` defines no loss(output, target).
  static absl::StatusOr<Objective> Make(TaskKind task, const std::string& loss,
                                        const Model& model);

  TaskKind task() const { return task_; }
  const std::string& loss_name() const { return loss_; }

  // The target tensor for `labels` (floats from Dataset::Read) against
  // `output`: class indices (int64) or float targets shaped like `output`.
  at::Tensor Targets(const at::Tensor& labels, const at::Tensor& output) const;
  // Mean loss of the batch.
  at::Tensor Loss(Model& model, const at::Tensor& output,
                  const at::Tensor& targets) const;
  // Adds the batch's metrics.
  void Score(const at::Tensor& output, const at::Tensor& targets,
             MetricSums* sums) const;
  // Checks one batch end to end: the output fits the labels and the loss.
  // InvalidArgument naming both shapes when it does not, e.g. a classifier
  // with fewer outputs than `label_count` classes.
  absl::Status Check(Model& model, const at::Tensor& output,
                     const at::Tensor& labels, int64_t label_count) const;

 private:
  Objective(TaskKind task, std::string loss)
      : task_(task), loss_(std::move(loss)) {}
  TaskKind task_;
  std::string loss_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_OBJECTIVE_H_
