// The job's training plan, made from the server's flags and checked before
// any board joins: the model loads, the evaluation data opens with the
// plan's binding, and one batch of it runs through the model and the loss.
// Thread-safety: pure function; the result is owned by the caller.
#ifndef FEDBERRY_SERVER_JOB_PLAN_H_
#define FEDBERRY_SERVER_JOB_PLAN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/dataset.h"
#include "runtime/model.h"
#include "runtime/model_file.h"
#include "runtime/objective.h"

namespace fedberry::server {

// What the operator asked for (the server's flags).
struct JobPlanRequest {
  std::string model = "lenet5";  // zoo name or TorchScript file
  std::string task = "classification";
  std::string loss;  // empty: the model's own loss(), else by task
  std::string optimizer = "sgd";
  double learning_rate = 0.05;
  double momentum = 0.9;
  double weight_decay = 0;
  std::vector<int64_t> input_shape;  // empty: from the evaluation data
  uint32_t num_outputs = 0;          // 0: from the evaluation data
  std::vector<float> input_mean;     // empty: see BuildJobPlan
  std::vector<float> input_std;
  std::string label_column;
  std::vector<std::string> feature_columns;
  // Aggregation: the strategy, FedProx's mu for the boards, the strategy's
  // own settings (recorded in the plan), the wire encodings.
  std::string strategy = "fedavg";
  double proximal_mu = 0;
  std::map<std::string, double> strategy_parameters;
  std::string update_encoding = "raw";
  double topk_fraction = 0.01;
  std::string model_encoding = "raw";
  // Parameters to train (a regex matching whole names); empty: all.
  std::string trainable;
  std::string eval_data;  // data spec; empty: no evaluation
  bool skip_bad_rows = false;
  std::string cache_dir;  // for the evaluation data's derived files
};

struct JobPlan {
  v1::TrainingPlan plan;
  std::shared_ptr<const std::string> model_file;  // TorchScript bytes
  std::unique_ptr<runtime::Model> model;          // the initial model
  std::optional<runtime::Objective> objective;
  std::unique_ptr<runtime::Dataset> eval;  // null without --eval_data
  std::vector<std::string> warnings;
};

// Builds and checks the plan. Without an input shape or output count the
// evaluation data gives them (its sample shape; its classes, or 1 target).
// Without a normalisation: IDX data gets Fashion-MNIST's statistics, CSV
// rows are standardised with the evaluation data's per-feature mean and
// deviation, images stay in [0, 1]. Zoo weights come from torch's global
// RNG (seed it first). InvalidArgument / NotFound with one message naming
// the model, the data and the shapes when something does not fit, or a
// `trainable` regex that matches no parameter of the model.
absl::StatusOr<JobPlan> BuildJobPlan(const JobPlanRequest& request);

// The job a site gateway serves (tiers): its parent's plan and model file
// (null for a built-in model), with the model built from them, whose layout
// checks the boards' updates. No evaluation: the parent evaluates.
// InvalidArgument when the plan trains a parameter the model lacks.
absl::StatusOr<JobPlan> JobPlanFromParent(
    const v1::TrainingPlan& plan, const runtime::VerifiedModelFile* file);

// Parses "3,32,32" / "0.5,0.25" / "a,b" flag values. InvalidArgument
// naming `flag` for a value that is not a number.
absl::StatusOr<std::vector<int64_t>> ParseShape(const std::string& text,
                                                const char* flag);
absl::StatusOr<std::vector<float>> ParseFloats(const std::string& text,
                                               const char* flag);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_JOB_PLAN_H_
