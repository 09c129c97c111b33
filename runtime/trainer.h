// The local training loop and evaluation, for any Model, Dataset and
// Objective. Batches are read from the data set one at a time; the data
// order of a run is a function of its seed, so the same seed and thread
// count give the same model.
// Thread-safety: one call at a time per Model.
#ifndef FEDBERRY_RUNTIME_TRAINER_H_
#define FEDBERRY_RUNTIME_TRAINER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "runtime/dataset.h"
#include "runtime/model.h"
#include "runtime/objective.h"

// Declared only: callers that make or step an optimizer include
// <torch/torch.h> themselves (see runtime/model.h).
namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace fedberry::runtime {

struct TrainOptions {
  int local_epochs = 1;
  int64_t local_steps = 0;  // > 0: this many batches instead of whole epochs
  int64_t batch_size = 32;
  std::string optimizer = "sgd";  // sgd, adam, adamw
  double learning_rate = 0.05;
  double momentum = 0.9;  // sgd
  double weight_decay = 0;
  uint64_t seed = 1;  // data order
  // FedProx (Li et al., MLSys 2020): (mu/2) ||w - anchor||^2 joins the
  // loss, so boards that do more local work drift less from the round's
  // global model. 0: off.
  double proximal_mu = 0;
  // Per parameter (Model::Parameters() order): whether it trains; empty:
  // all do. A frozen one gets requires_grad(false), no gradient and no
  // optimizer state (runtime/trainable_set.h), so it stays as loaded.
  std::vector<bool> trainable;
};

struct TrainResult {
  int64_t samples = 0;  // samples seen (the FedAvg weight)
  int64_t steps = 0;
  double mean_loss = 0;
  double accuracy = 0;
  double seconds = 0;
};

struct EvalResult {
  int64_t samples = 0;
  double mean_loss = 0;
  double accuracy = 0;  // classification
  double rmse = 0;      // regression
  double mae = 0;       // regression
  bool regression = false;
};

// Where a local training run is: enough, with the model and optimizer
// state, to continue it exactly (the data order is a function of the seed
// and the epoch, so the step fixes the position in it).
struct TrainCursor {
  int64_t step = 0;  // batches done
  int64_t planned = 0;
  int64_t samples = 0;
  int64_t correct = 0;
  double loss_sum = 0;
  double seconds = 0;  // training time before this run resumed
};

// Optional hooks into a training run. Batch boundaries are its pause points.
struct TrainHooks {
  // Checked before each batch; Cancelled when true.
  const std::atomic<bool>* stop = nullptr;
  // Continue from here instead of step 0 (with the model already restored).
  const TrainCursor* resume = nullptr;
  // Called once the optimizer exists when resuming, to restore its state.
  std::function<absl::Status(torch::optim::Optimizer&)> restore_optimizer;
  // Called after each batch with the cursor, the model and the optimizer
  // (e.g. to checkpoint them, or to pause there). An error stops training
  // with that error.
  std::function<absl::Status(const TrainCursor&, Model&,
                             torch::optim::Optimizer&)>
      after_batch;
  // Asked before each batch: split it into this many micro-batches whose
  // gradients accumulate before the one optimizer step (less activation
  // memory, same effective batch; equal to the whole batch up to float
  // rounding, not bit for bit). Empty or <= 1: the whole batch at once.
  std::function<int()> micro_batches;
  // With options.proximal_mu > 0: the round's global model's parameters, in
  // Model::Parameters() order, the proximal term pulls towards (required).
  const std::vector<at::Tensor>* proximal_anchor = nullptr;
  // Times the run (TrainResult::seconds, TrainCursor::seconds).
  Clock* clock = &Clock::Real();
};

// Optimizer names TrainOptions::optimizer accepts.
std::vector<std::string> OptimizerNames();

// The optimizer `options` names over `parameters`. InvalidArgument for an
// unknown name or a learning rate that is not a positive number.
absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const TrainOptions& options, std::vector<at::Tensor> parameters);

// Trains `model` in place, minimising `objective`. Cancelled when
// hooks.stop becomes true between batches; InvalidArgument for empty data,
// bad options (a `trainable` list that is not one entry per parameter) or a
// resume cursor that does not fit them; Internal when LibTorch fails. The
// optimizer covers the trainable parameters only, so its state (and what
// hooks.restore_optimizer restores) is laid out over those.
absl::StatusOr<TrainResult> Train(Model& model, const Dataset& data,
                                  const Objective& objective,
                                  const TrainOptions& options,
                                  const TrainHooks& hooks = {});

// Mean loss and the task's metrics of `model` on `data`. The default batch
// is the fastest measured for LeNet-5 on the 10k test split at 1 thread
// (bench/loop_bench: 100 ahead of 50-250 by a few %, of 500 by 15%, and far
// ahead of 1000 and more, whose activations outgrow the heap's mmap
// threshold and are page-faulted in again every batch).
// `max_samples` > 0 evaluates only the first that many samples.
absl::StatusOr<EvalResult> Evaluate(Model& model, const Dataset& data,
                                    const Objective& objective,
                                    int64_t batch_size = 100,
                                    int64_t max_samples = 0);

// Inputs [n, ...sample shape] and float labels [n] of rows `rows`.
struct Batch {
  at::Tensor inputs;
  at::Tensor labels;
};
Batch ReadBatch(const Dataset& data, const int64_t* rows, int64_t n);

// Runs the first `n` samples of `data` through `model` and `objective`:
// the start-up check of a plan. InvalidArgument naming the model, the shape
// given and what went wrong.
absl::Status CheckModelOnData(Model& model, const Dataset& data,
                              const Objective& objective, int64_t n = 4);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TRAINER_H_
