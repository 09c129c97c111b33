// The local training loop and evaluation. Batches are converted from uint8 to
// float one at a time; the data order of a run is a function of its seed, so
// the same seed and thread count give the same model.
// Thread-safety: one call at a time per Net.
#ifndef FEDBERRY_RUNTIME_TRAINER_H_
#define FEDBERRY_RUNTIME_TRAINER_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "runtime/image_dataset.h"
#include "runtime/model.h"

namespace fedberry::runtime {

struct TrainOptions {
  int local_epochs = 1;
  int64_t local_steps = 0;  // > 0: this many batches instead of whole epochs
  int64_t batch_size = 32;
  double learning_rate = 0.05;
  double momentum = 0.9;
  uint64_t seed = 1;  // data order
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
  double accuracy = 0;
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
  std::function<absl::Status(const TrainCursor&, Net&,
                             torch::optim::Optimizer&)>
      after_batch;
  // Asked before each batch: split it into this many micro-batches whose
  // gradients accumulate before the one optimizer step (less activation
  // memory, same effective batch; equal to the whole batch up to float
  // rounding, not bit for bit). Empty or <= 1: the whole batch at once.
  std::function<int()> micro_batches;
};

// Trains `net` in place with SGD (momentum). Cancelled when hooks.stop
// becomes true between batches; InvalidArgument for empty data, bad options
// or a resume cursor that does not fit them; Internal when LibTorch fails.
absl::StatusOr<TrainResult> Train(Net& net, const ImageDataset& data,
                                  const TrainOptions& options,
                                  const TrainHooks& hooks = {});

// Mean cross-entropy loss and accuracy of `net` on `data`. The default batch
// is the fastest measured for LeNet-5 on the 10k test split at 1 thread
// (bench/loop_bench: 100 ahead of 50-250 by a few %, of 500 by 15%, and far
// ahead of 1000 and more, whose activations outgrow the heap's mmap
// threshold and are page-faulted in again every batch).
absl::StatusOr<EvalResult> Evaluate(Net& net, const ImageDataset& data,
                                    int64_t batch_size = 100);

// Normalised float batch [n, 1, H, W] of rows `rows` of `data`.
torch::Tensor ImageBatch(const ImageDataset& data, const int64_t* rows,
                         int64_t n);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TRAINER_H_
