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

// Called after each batch with (steps done, steps planned).
using ProgressFn = std::function<void(int64_t, int64_t)>;

// Trains `net` in place with SGD (momentum). Cancelled when `stop` becomes
// true between batches; InvalidArgument for empty data or bad options;
// Internal when LibTorch fails.
absl::StatusOr<TrainResult> Train(Net& net, const ImageDataset& data,
                                  const TrainOptions& options,
                                  const std::atomic<bool>* stop = nullptr,
                                  const ProgressFn& progress = nullptr);

// Mean cross-entropy loss and accuracy of `net` on `data`.
absl::StatusOr<EvalResult> Evaluate(Net& net, const ImageDataset& data,
                                    int64_t batch_size = 500);

// Normalised float batch [n, 1, H, W] of rows `rows` of `data`.
torch::Tensor ImageBatch(const ImageDataset& data, const int64_t* rows,
                         int64_t n);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TRAINER_H_
